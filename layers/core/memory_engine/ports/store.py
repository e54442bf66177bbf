"""The store port: the system of record (sessions, turns, memories) and what its writes report."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from pydantic import Field

from memory_engine.errors import InvalidInput
from memory_engine.models.base import Model
from memory_engine.models.deletes import DeleteIntent
from memory_engine.models.domain import Memory, Session, Turn
from memory_engine.models.life import MemoryLife
from memory_engine.models.statements import ThreadStatements


@dataclass(frozen=True)
class ConsolidateOutcome:
    """What one conditional turn write did: `created` is False for an idempotent replay.

    `session_created` says the write also created the session (its first turn): consolidate
    closes the thread's earlier sessions then, with no read of its own. It reports how the write
    went, not what is stored, so it is left out of equality."""

    created: bool
    buffered_count: int
    session_created: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class FactScope:
    """A memory-bank scope that holds facts, as the inspector lists it: counted from the facts'
    own listing, never by reading the facts."""

    thread: str  # `scope_key(scope)`: what lists its facts
    scope: dict[str, str]
    facts: int


@dataclass(frozen=True, order=True)
class Buffer:
    """A session whose buffer holds turns: how many, and when the oldest of them arrived."""

    tenant: str
    session_uuid: str
    turns: int
    oldest: datetime


class RemovalOutcome(Model):
    deleted_memories: list[str] = Field(default_factory=list)
    deleted_dialogs: list[str] = Field(default_factory=list)
    rebuffered_dialogs: list[str] = Field(default_factory=list)
    buffered_count: int = 0
    # A memory's removal: its session and the turns it left as forgotten history, for the sweep
    # (a tenant's retention removes them too); never part of a response.
    session_uuid: str = Field("", exclude=True)
    forgotten_dialogs: list[str] = Field(default_factory=list, exclude=True)
    # A dialog delete that took the session's last turn removed the session too.
    deleted_session: bool = False
    # The thread of the session a dialog delete touched (a removed session's included), so the
    # caller can tell whether the thread still has a session (`Store.thread_has_sessions`).
    thread: str = Field("", exclude=True)
    # The memories removed, as read in the removal (a delete by id's, a dialog delete's): what
    # their extractor named as replaced is reopened after them (`usecases.removed_facts`).
    removed: list[Memory] = Field(default_factory=list, exclude=True)


class ForkPlan(Model):
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
    """System of record: sessions, turns (with their buffer state) and memories with embeddings.

    A memory past its `expires_at` (by the store's clock) is gone for every read below
    (`get_memory`, `get_memories`, `list_memories`, `iter_memories`, `list_thread_memories`)
    from that instant, though it stays stored until the sweep removes it (`expired_memories`)."""

    def get_session(self, tenant: str, session_uuid: str) -> Session | None: ...

    def list_sessions(
        self, tenant: str, after: tuple[str, str] | None = None, limit: int | None = None
    ) -> list[Session]:
        """The tenant's sessions by thread then session uuid (the inspector lists them): those
        after `after` (thread, session uuid) when given, at most `limit` (None: every one).

        Keyset pages: walking them visits every session once. Meant for inspection, never for
        the request path of the API."""
        ...

    def fact_scopes(self, tenant: str, after: str | None = None, limit: int = 100) -> list[FactScope]:
        """The tenant's memory-bank scopes that hold facts, by thread (`scope_key`), those after
        the thread `after`, at most `limit`, each with its count of facts. Reads the facts' own
        listing (their keys), and one fact per scope for its scope: never the tenant's memories."""
        ...

    def sessions_after(self, tenant: str, after: tuple[str, str] | None, limit: int) -> list[Session]:
        """Up to `limit` sessions of the tenant after the session `after` ((thread, session uuid);
        None: from the first), in an order of the backend's that walking the pages keeps: every
        session is visited once, at the cost of one page each (export reads a tenant with it); a
        short page is the last."""
        ...

    def thread_has_sessions(self, tenant: str, thread: str) -> bool:
        """Whether any session of the thread (`parent_session_uuid`) is stored: one bounded read,
        whatever the thread's length (a delete asks it once it removed a session). On DynamoDB the
        listing index is eventually consistent: a session it still lists after its delete is read
        back consistently and not counted; one created an instant ago may not be counted yet."""
        ...

    def append_turn(self, session: Session, turn: Turn) -> ConsolidateOutcome:
        """Create the session if new and append the turn, atomically and idempotently on dialog uuid.

        Raises Conflict, writing nothing, when the session exists under another thread than
        `session.parent_session_uuid` (`models.domain.check_thread`), or when the dialog uuid exists
        with other content. The stored turn's `seq` is assigned by the store (the value passed in
        is ignored). One conditional write; the outcome says whether it created the session.
        """
        ...

    def list_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        """Every turn of the session, oldest first."""
        ...

    def get_turn(self, tenant: str, session_uuid: str, dialog_uuid: str) -> Turn | None:
        """The session's turn of that dialog uuid (None: none stored): one read of one turn,
        whatever the session holds (a dialog delete reads which memory the turn is in first)."""
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

    def buffers(self) -> list[Buffer]:
        """Every session, of every tenant, whose buffer holds a turn, with its count of buffered
        turns and its oldest one's arrival, sorted by (tenant, session): what the sweep reads,
        once per run, to queue the full buffers and force those past a tenant's retention (cost:
        one read of the buffered turns, not the whole store)."""
        ...

    def save_memory(self, memory: Memory) -> bool:
        """Write the memory and mark its source turns extracted, only if all are still buffered.

        Returns False (writing nothing) when any source turn was already claimed or deleted:
        a retried or duplicated extraction can never produce a second memory for the same turns.
        Also False when the memory id is already stored for this tenant.
        """
        ...

    def get_memory(self, tenant: str, memory_id: str) -> Memory | None: ...

    def get_memories(
        self, tenant: str, memory_ids: Sequence[str], *, vectors: bool = True, expired: bool = False
    ) -> dict[str, Memory]:
        """The memories that exist among `memory_ids`, by id, read in one round trip where the
        backend allows (retrieve shapes its top hits with it). `vectors=False` leaves each
        memory's vectors (`embedding`, `turn_embeddings`, `window_embeddings`) empty: retrieve never
        reads them, and decoding 3,456 floats per memory was a tenth of a retrieve's time.
        `expired=True` gives expired memories still stored too (left out otherwise, as every read
        leaves them): the sweep reads what it is about to remove."""
        ...

    def list_memories(self, tenant: str, session_uuid: str) -> list[Memory]: ...

    def iter_memories(self, tenant: str | None = None) -> Iterator[Memory]:
        """Every memory (of one tenant, or of all), for rebuilding the search index."""
        ...

    def expired_memories(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        """(tenant, memory_id) of up to `limit` memories, of every tenant, whose `expires_at` is at
        or before `now`, soonest expired first: what the sweep removes (cost: the expiring
        memories read, never the whole store)."""
        ...

    def memories_after(self, tenant: str, after: str | None, limit: int) -> list[Memory]:
        """Up to `limit` memories of the tenant (of every thread and scope), in memory id order,
        after the memory id `after` (None: from the first): keyset pages, as export reads them.
        Expired memories are left out (the page filled from further on): a short page is the last."""
        ...

    def delete_memory(self, tenant: str, memory_id: str) -> RemovalOutcome:
        """Delete one memory (an expired one too); its turns stay as history, marked forgotten."""
        ...

    def delete_dialog(self, tenant: str, session_uuid: str, dialog_uuid: str) -> RemovalOutcome:
        """Delete a turn and, in cascade, the memories derived from it; their other turns go back
        to the buffer. The session's last turn takes the session with it (`deleted_session`); the
        outcome names the session's thread. Raises NotFound when the session has no such dialog."""
        ...

    def get_characters(self, tenant: str, thread: str) -> dict[str, list[str]]:
        """The thread's character registry: canonical name → aliases ({} when none yet)."""
        ...

    def save_characters(self, tenant: str, thread: str, registry: dict[str, list[str]]) -> None:
        """Replace the thread's character registry."""
        ...

    def get_statements(self, tenant: str, thread: str) -> ThreadStatements | None:
        """The thread's statements record (`models.statements`), None when none is stored yet.
        One read of one record, whatever the thread holds: what supersession reads."""
        ...

    def save_statements(self, record: ThreadStatements) -> bool:
        """Store `record` with its version plus one, only if the stored record's version is still
        `record.version` (0: none stored). False (writing nothing) otherwise: another worker of the
        thread wrote it since it was read; the caller reads it again and merges (compare-and-set)."""
        ...

    def forget_thread_records(self, tenant: str, thread: str) -> None:
        """Delete the thread's own records: its character registry and its statements record
        (both hold character names). Deleting what is not there does nothing."""
        ...

    def create_fork(self, plan: ForkPlan) -> None:
        """Write the target session, its turns and memories at once. Raises Conflict if it exists.

        Turns keep the seq, status and memory_id the plan gives them; the target's next seq is the
        last kept seq + 1.
        """
        ...

    # -- deletes in flight (models/deletes.py, usecases/delete_intents.py) ----------------------

    def begin_delete(self, intent: DeleteIntent) -> None:
        """Record a delete before its first change: one write. The same delete (`intent.key`)
        begun again replaces the record, with its new `begun`."""
        ...

    def end_delete(self, intent: DeleteIntent) -> None:
        """Remove the record of the delete `intent.key` after its last change (whatever its
        `begun`): one write. Ending what is not recorded does nothing."""
        ...

    def deletes_begun(self, before: datetime, limit: int) -> list[DeleteIntent]:
        """Up to `limit` deletes, of every tenant, begun at or before `before` and not ended,
        oldest first: what the sweep finishes (cost: the recorded deletes read, never the store)."""
        ...

    # -- a tenant's retention (usecases/retention.py) -------------------------------------------

    def get_retention(self, tenant: str) -> int | None:
        """The tenant's retention in days (None: memories are kept until deleted)."""
        ...

    def set_retention(self, tenant: str, days: int | None) -> None:
        """From now on, every memory the store saves for the tenant (`save_memory`, `create_fork`)
        expires `days` after its creation, or sooner if it was asked to (`Memory.retained`);
        None: no retention. Memories already stored are left as they are."""
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

    def latest_thread_memories(self, tenant: str, thread: str, limit: int) -> list[Memory]:
        """The thread's `limit` newest memories (by memory id: creation order), newest first: what
        an extractor is shown of the thread's current facts, whatever the thread's length."""
        ...

    def update_memory(self, memory: Memory, *, expected_life: MemoryLife | None = None) -> bool:
        """Replace the stored memory of the same tenant and id with `memory` (fields, embedding,
        source text, metadata, scope); its session, thread and source turns cannot change.
        False (writing nothing) when no such memory is stored, or when `expected_life` is given
        and the stored memory's life is no longer it: a compare-and-set for a read-modify-write
        of what replaced what, which two workers of one thread may do at once (the caller reads
        the memory again and retries)."""
        ...

    def delete_session(self, tenant: str, session_uuid: str) -> RemovalOutcome:
        """Delete a session with all its turns and every memory extracted from it, at once.

        `deleted_memories` / `deleted_dialogs` name what went (for the index); an unknown session
        deletes nothing and is not an error."""
        ...
