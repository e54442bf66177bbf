"""Queue messages: the jobs the request path hands to the worker.

Four kinds share the one queue, told apart by `kind`: extraction of a session's buffered turns
(consolidate, delete, fork, recordmemory), recording a chat exchange to a user's memory (chat
completions with a `userid`), a follow-up purge after a user's memory was deleted, and a delayed
second delete from an eventually consistent search index. Every
producer sends one of these models; every consumer parses a body with `parse_job` and routes it by
kind in one place (`memory_engine.usecases.jobs`). The embedding function's request and answer are
here too.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag, TypeAdapter

from memory_engine.models.base import Model

# Chat exchanges travel inside the message: bounded so a job always fits SQS's 256 KB limit.
MAX_JOB_TEXT_CHARS = 32_000


CHAT_SESSION_PREFIX = "chat:"


def chat_session_uuid(userid: str) -> str:
    """The session that keeps a chat user's raw exchanges (one per user). Names with this prefix
    are reserved: no other route may create such a session."""
    return f"{CHAT_SESSION_PREFIX}{userid}"


class ExtractionJob(Model):
    """Extract a session's buffered turns. `force` also takes the last, short batch.

    `through_seq` marks the continuation of a job that stopped at its budget
    (`extraction.budget`): it takes the batches that job left, every complete batch of the turns up
    to that one (and with `force` the short rest), whatever the threshold says."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["extract"] = "extract"
    tenant: str
    session_uuid: str
    force: bool = False
    through_seq: int | None = None

    def group_id(self) -> str:
        """FIFO message group: one job at a time per session."""
        return f"{self.tenant}#{self.session_uuid}"


class ChatMemoryJob(Model):
    """Record one chat exchange to a user's memory: the raw turn, then facts from the user's words.

    `dialog_uuid` makes a redelivered job write the same turn again (a no-op), never a second one.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["chat_memory"] = "chat_memory"
    tenant: str
    userid: str
    dialog_uuid: str
    user_messages: list[str] = Field(min_length=1)
    answer: str = ""
    language: str = "ko"

    def group_id(self) -> str:
        """The user's chat session: exchanges are recorded in the order they were answered."""
        return f"{self.tenant}#{chat_session_uuid(self.userid)}"


class ForgetUserJob(Model):
    """Delete a chat user's memory again, after any exchange still queued for them was recorded.

    Sent by DELETE /v1/users/{userid}/memory in the user's message group, so it runs after every
    ChatMemoryJob queued before the delete: nothing recorded late survives the delete.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["forget_user"] = "forget_user"
    tenant: str
    userid: str

    def group_id(self) -> str:
        return f"{self.tenant}#{chat_session_uuid(self.userid)}"


# Memory ids per purge job: a message stays far below SQS's 256 KB, and a purge one page of deletes.
MAX_PURGE_IDS = 100


class IndexPurgeJob(Model):
    """Delete memories from the search index a second time, once it is sure to show every copy.

    An eventually consistent index (OpenSearch: a write is searchable after a refresh, up to tens
    of seconds on Serverless) finds the copies it deletes by searching, so a delete right after a
    write can miss the copy just written. The worker runs this job no earlier than `not_before`;
    deleting what is gone already is a no-op, so it may run twice."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["index_purge"] = "index_purge"
    tenant: str
    memory_ids: list[str] = Field(min_length=1, max_length=MAX_PURGE_IDS)
    not_before: datetime

    def group_id(self) -> str:
        """A group of its own: a purge waiting for its time holds up no session's jobs."""
        digest = hashlib.sha256("\n".join(self.memory_ids).encode()).hexdigest()[:16]
        return f"{self.tenant}#purge:{digest}"


def _kind(value: Any) -> str:
    # Bodies queued before jobs had kinds are extraction jobs.
    if isinstance(value, dict):
        return str(value.get("kind", "extract"))
    return str(getattr(value, "kind", "extract"))


Job = Annotated[
    Annotated[ExtractionJob, Tag("extract")]
    | Annotated[ChatMemoryJob, Tag("chat_memory")]
    | Annotated[ForgetUserJob, Tag("forget_user")]
    | Annotated[IndexPurgeJob, Tag("index_purge")],
    Discriminator(_kind),
]

# Built on the first parse, like the job models themselves (models/base.py): only the worker parses.
_JOB: TypeAdapter[Job] = TypeAdapter(Job, config=ConfigDict(defer_build=True))


def parse_job(body: str | bytes) -> Job:
    """A queue message body (JSON) as the job it carries."""
    return _JOB.validate_json(body)


class EmbeddingInvocation(Model):
    """What the remote embedder sends the embedding function (Lambda invoke or SageMaker body)."""

    texts: list[str] = Field(min_length=1, max_length=256)
    mode: Literal["query", "passage"] = "passage"


class EmbeddingResult(Model):
    """The embedding function's answer: one vector per text, in order."""

    embeddings: list[list[float]]
    dimension: int
