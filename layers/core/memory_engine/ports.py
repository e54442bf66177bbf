"""Typed ports. Use cases depend on these; adapters (local, aws, openai) implement them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from memory_engine.errors import InvalidInput
from memory_engine.models.domain import Memory, MemoryFields, Session, Turn
from memory_engine.models.keys import ApiKey
from memory_engine.models.messages import Job

EmbedMode = Literal["query", "passage"]
# What an index document stands for: a whole memory, or one source turn of a memory (a part that
# points back to it through `memory_id`). Lexical statistics are kept per kind.
DocKind = Literal["memory", "turn"]


@dataclass(frozen=True)
class ConsolidateOutcome:
    """What one conditional turn write did: `created` is False for an idempotent replay.

    `session_created` says the write also created the session (its first turn): consolidate
    closes the thread's earlier sessions then, with no read of its own. It reports how the write
    went, not what is stored, so it is left out of equality."""

    created: bool
    buffered_count: int
    session_created: bool = field(default=False, compare=False)


class RemovalOutcome(BaseModel):
    deleted_memories: list[str] = Field(default_factory=list)
    deleted_dialogs: list[str] = Field(default_factory=list)
    rebuffered_dialogs: list[str] = Field(default_factory=list)
    buffered_count: int = 0


class ForkPlan(BaseModel):
    """Everything a fork writes, computed by the use case and written by the store in one go."""

    target: Session
    turns: list[Turn]
    memories: list[Memory]

    def check_one_session(self) -> None:
        """Raise InvalidInput when a turn or memory of the plan belongs to another session."""
        home = (self.target.tenant, self.target.session_uuid)
        strangers = [t.dialog_uuid for t in self.turns if (t.tenant, t.session_uuid) != home]
        strangers += [m.memory_id for m in self.memories if (m.tenant, m.session_uuid) != home]
        if strangers:
            target = self.target.session_uuid
            raise InvalidInput(f"The fork plan for {target} carries records of other sessions: {strangers}.")


class Store(Protocol):
    """System of record: sessions, turns (with their buffer state) and memories with embeddings."""

    def get_session(self, tenant: str, session_uuid: str) -> Session | None: ...

    def list_sessions(self, tenant: str) -> list[Session]:
        """Every session of the tenant, by thread then session uuid (the inspector lists them).

        Reads the whole tenant: meant for inspection, never for the request path of the API."""
        ...

    def append_turn(self, session: Session, turn: Turn) -> ConsolidateOutcome:
        """Create the session if new and append the turn, atomically and idempotently on dialog uuid.

        Raises Conflict, writing nothing, when the session exists under another thread than
        `session.parent_session_uuid` (`models.domain.check_thread`), or when the dialog uuid exists
        with other content. The stored turn's `seq` is assigned by the store (the value passed in
        is ignored). One conditional write; the outcome says whether it created the session.
        """
        ...

    def get_turn(self, tenant: str, session_uuid: str, dialog_uuid: str) -> Turn | None: ...

    def list_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        """Every turn of the session, oldest first."""
        ...

    def buffered_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        """Turns not yet extracted, oldest first."""
        ...

    def buffered_turns_in_threads(self, tenant: str, threads: Sequence[str]) -> list[Turn]:
        """Buffered turns of every session whose parent_session_uuid is in `threads`."""
        ...

    def save_turn_vectors(self, tenant: str, session_uuid: str, vectors: Mapping[str, list[float]]) -> int:
        """Store each turn's passage vector (`Turn.embedding`), by dialog uuid; turns no longer
        stored are skipped. Returns how many were written."""
        ...

    def full_buffers(self, at_least: int) -> list[tuple[str, str]]:
        """(tenant, session_uuid) of every session, of every tenant, that buffers `at_least` turns
        or more, sorted: what the sweep queues extraction for (cost: the buffered turns, not the
        whole store)."""
        ...

    def save_memory(self, memory: Memory) -> bool:
        """Write the memory and mark its source turns extracted, only if all are still buffered.

        Returns False (writing nothing) when any source turn was already claimed or deleted:
        a retried or duplicated extraction can never produce a second memory for the same turns.
        Also False when the memory id is already stored for this tenant.
        """
        ...

    def get_memory(self, tenant: str, memory_id: str) -> Memory | None: ...

    def get_memories(self, tenant: str, memory_ids: Sequence[str]) -> dict[str, Memory]:
        """The memories that exist among `memory_ids`, by id, read in one round trip where the
        backend allows (retrieve shapes its top hits with it)."""
        ...

    def list_memories(self, tenant: str, session_uuid: str) -> list[Memory]: ...

    def iter_memories(self, tenant: str | None = None) -> Iterator[Memory]:
        """Every memory (of one tenant, or of all), for rebuilding the search index."""
        ...

    def delete_memory(self, tenant: str, memory_id: str) -> RemovalOutcome:
        """Delete one memory; its turns stay as history, marked forgotten."""
        ...

    def delete_dialog(self, tenant: str, session_uuid: str, dialog_uuid: str) -> RemovalOutcome:
        """Delete a turn and, in cascade, the memories derived from it; their other turns go back
        to the buffer. Raises NotFound when the session has no such dialog."""
        ...

    def get_characters(self, tenant: str, thread: str) -> dict[str, list[str]]:
        """The thread's character registry: canonical name → aliases ({} when none yet)."""
        ...

    def save_characters(self, tenant: str, thread: str, registry: dict[str, list[str]]) -> None:
        """Replace the thread's character registry."""
        ...

    def create_fork(self, plan: ForkPlan) -> None:
        """Write the target session, its turns and memories at once. Raises Conflict if it exists.

        Turns keep the seq, status and memory_id the plan gives them; the target's next seq is the
        last kept seq + 1.
        """
        ...

    # -- added for the API dialects (memory bank, chat memory, game API) ------------------------
    # Every store also keeps `Memory.scope` (a flat str→str dict, {} for engine memories) and gives
    # it back whole. A scope's memories are those whose parent_session_uuid is `scope_key(scope)`.

    def list_thread_memories(
        self, tenant: str, thread: str, after: str | None = None, limit: int = 100
    ) -> list[Memory]:
        """Up to `limit` memories whose parent_session_uuid is `thread`, in memory id order,
        starting after the memory id `after` (None: from the first). Keyset pages: walking them
        visits every memory of the thread once, even while others are added or deleted."""
        ...

    def update_memory(self, memory: Memory) -> bool:
        """Replace the stored memory of the same tenant and id with `memory` (fields, embedding,
        source text, metadata, scope); its session, thread and source turns cannot change.
        False (writing nothing) when no such memory is stored."""
        ...

    def delete_session(self, tenant: str, session_uuid: str) -> RemovalOutcome:
        """Delete a session with all its turns and every memory extracted from it, at once.

        `deleted_memories` / `deleted_dialogs` name what went (for the index); an unknown session
        deletes nothing and is not an error."""
        ...


class Queue(Protocol):
    """Hands jobs to the worker (SQS FIFO on AWS, a table + thread locally).

    A job of any kind (`models.messages.Job`) goes in its `group_id()` message group; consumers
    parse bodies with `models.messages.parse_job`.
    """

    def send(self, job: Job) -> None:
        """Queue a job. Never dropped when an identical job is in flight or was already done; one
        identical to a job still waiting may be dropped (local) or delivered (SQS), since running a
        job twice is harmless: every job is idempotent."""
        ...


class ReceivedJob(BaseModel):
    """A job in hand: ack it when done, release it to have it delivered again."""

    model_config = ConfigDict(frozen=True)

    receipt: str
    job: Job
    receive_count: int


class DeadJob(BaseModel):
    """A job parked after its last failed attempt, with what it failed on (for `jobs list|retry`).

    `error` is "" when the queue itself parked it (SQS redrive after a crash or a timeout)."""

    id: str  # the dead letter's id in its queue (local row id; SQS message id)
    job: Job
    error: str = ""
    receive_count: int = 0
    dead_at: datetime | None = None


class JobSource(Protocol):
    """The consumer side of the queue: received jobs are acked, retried later, or parked as dead.

    The local worker polls it itself; on AWS the Lambda service polls SQS and hands the worker its
    records, and the worker settles failures through the same methods (`usecases.jobs.attempt`).
    """

    def receive(self, max_messages: int = 1, visibility_seconds: float = 30) -> list[ReceivedJob]: ...

    def ack(self, receipt: str) -> bool: ...

    def release(self, receipt: str) -> bool: ...

    def retry_later(self, receipt: str, delay_seconds: float, error: str) -> bool:
        """Deliver the job again after `delay_seconds` (its group waits meanwhile: FIFO order)."""
        ...

    def bury(self, message: ReceivedJob, error: str) -> None:
        """Park the job among the dead letters with the error it failed on; it is no longer queued."""
        ...


class QueueSnapshot(BaseModel):
    """One tenant's jobs in the queue, oldest first.

    None where the backend cannot list them: on SQS only the worker may receive from the queues
    (a receive would also count towards dead-lettering and hold the session's FIFO group), so
    neither waiting nor dead jobs are read there; the local queue lists both.
    """

    pending: list[Job] | None
    dead: list[DeadJob] | None


@runtime_checkable
class QueueInspector(Protocol):
    """What the memory inspector reads of a queue: a tenant's pending and dead jobs."""

    def snapshot(self, tenant: str) -> QueueSnapshot: ...


class DeadLetters(Protocol):
    """The dead jobs of a queue, for operators: list them, send them back to the queue."""

    def dead_letters(self) -> list[DeadJob]:
        """Every dead job, oldest first."""
        ...

    def redrive(self, ids: Sequence[str] | None = None) -> list[DeadJob]:
        """Queue the dead jobs named by id (None: all) again, as new jobs; returns those queued."""
        ...


class IndexDocument(BaseModel):
    """A memory, or one turn of a memory, as the search index sees it."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    doc_id: str
    session_uuid: str
    thread: str
    text: str
    vector: list[float] = Field(repr=False)
    source_dialog_uuids: list[str]
    created_at: datetime
    kind: DocKind = "memory"
    # For a "turn" document: the memory it is part of. Deleting that memory's document deletes it.
    memory_id: str | None = None
    # When it was said: the turn's timestamp (a memory's: its first turn's). None for a fact.
    occurred_at: datetime | None = None


class IndexHit(BaseModel):
    """A candidate with both raw scores; either may be 0 when only one retriever found it."""

    doc_id: str
    dense: float = 0.0
    lexical: float = 0.0
    # Echo of the document's `memory_id` (the memory a turn document is part of); None for a memory.
    memory_id: str | None = None
    # Echo of the document's `occurred_at`, for matching dates the query names.
    occurred_at: datetime | None = None
    # Echo of the document's `text` for a turn document (its line and date): a hit's evidence.
    text: str = ""


class SearchIndex(Protocol):
    """Derived data: rebuilt from the store whenever needed."""

    def upsert(self, docs: Sequence[IndexDocument]) -> None: ...

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        """Remove the documents and every document whose `memory_id` is among `doc_ids`."""
        ...

    def search(
        self,
        tenant: str,
        threads: Sequence[str],
        text: str,
        vector: Sequence[float],
        k: int,
        kind: DocKind = "memory",
    ) -> list[IndexHit]:
        """Up to k dense and up to k lexical candidates of one kind within the threads, merged by doc id.

        BM25 statistics (document frequencies, average length) are those of the documents of that
        kind, so a turn's lexical score is never diluted by memory-sized documents.
        """
        ...

    def clear(self, tenant: str | None = None) -> None: ...


@runtime_checkable
class IndexBootstrap(Protocol):
    """An index that must be created before use (OpenSearch): run once at deploy time."""

    def ensure_index(self) -> None:
        """Create the index with its mapping if it does not exist; a no-op when it does."""
        ...


class Embedder(Protocol):
    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        """Unit-normalised vectors, one per text, in order."""
        ...


class ExtractionContext(BaseModel):
    """What an extractor knows beyond the batch: the user's name, language and known characters."""

    user_name: str = "당신"
    language: str = "ko"
    length_limit: int = 1000
    known_characters: dict[str, list[str]] = Field(default_factory=dict)


class Extraction(BaseModel):
    """An extractor's answer: the memory fields plus what it cost (tokens, model, prompt version)."""

    fields: MemoryFields
    metadata: dict[str, str | int | float] = Field(default_factory=dict)


class Extractor(Protocol):
    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        """One memory from one batch of consecutive turns. Raises on failure, never returns empty."""
        ...


class Clock(Protocol):
    def now(self) -> datetime: ...


class ChatUpstream(Protocol):
    """An OpenAI-compatible chat-completions endpoint, spoken to in its own JSON.

    Errors: `UpstreamRejected` (the endpoint answered 4xx: its status and body, to pass through)
    and `UpstreamFailed` (unreachable, timed out, or 5xx).
    """

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat completion for a request body (`stream` false)."""
        ...

    def stream(self, body: dict[str, Any]) -> Iterator[str]:
        """The `data:` payloads of a streamed completion (`stream` true), in order, without the
        final `[DONE]`. Connects before returning, so refusals raise here, not while iterating."""
        ...


class KeyStore(Protocol):
    """API keys by key id (DynamoDB: `pk = KEY#<key_id>`); only hashes are stored, never keys."""

    def create_key(self, key: ApiKey) -> None:
        """Store a new key. Raises Conflict when the key id is taken (the caller draws another)."""
        ...

    def get_key(self, key_id: str) -> ApiKey | None: ...

    def list_keys(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (of one tenant, or of all), oldest first, revoked ones included."""
        ...

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey:
        """Stop the key working from `at` (an earlier revocation stands). Raises NotFound."""
        ...

    def rotate_key(self, key_id: str, replacement: ApiKey, revoke_at: datetime) -> ApiKey:
        """Atomically store `replacement` and revoke the old key from `revoke_at` (a grace period
        when in the future). Raises NotFound for an unknown key, Conflict for a revoked one."""
        ...


class UsagePlanKeys(Protocol):
    """Per-key rate limits in front of the engine: API Gateway usage-plan keys on AWS (none locally,
    where the server's token bucket does the job).

    A memory-engine key id has at most one usage-plan key; its value is `auth.usage_key_value(key_id)`,
    which the authorizer returns as the request's usage identifier.
    """

    def add(self, key_id: str) -> None:
        """Give the key id its usage-plan key. Raises Conflict (writing nothing) when that key
        exists already; on any other failure nothing is left behind either."""
        ...

    def remove(self, key_id: str) -> bool:
        """Delete the key id's usage-plan key, in or out of the plan; False when it had none."""
        ...

    def key_ids(self) -> set[str]:
        """The key ids that have a key in the usage plan."""
        ...
