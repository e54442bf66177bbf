"""Bodies of the memory inspector's routes (`/v1/inspect/...`): read-only views of a tenant's data.

Views show stored records as they are (every memory field, turn status, fork origin) without
embeddings, which no reader can use and which would make every answer megabytes long.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from memory_engine.models.api import Body, Identifier
from memory_engine.models.base import Model
from memory_engine.models.domain import MemoryFields, Session, Turn, TurnStatus, TurnType
from memory_engine.models.life import MemoryLife
from memory_engine.models.messages import Job, chat_session_uuid
from memory_engine.models.queue import DeadJob

CHAT_SESSION_PREFIX = chat_session_uuid("")


class SessionView(Model):
    session_uuid: str
    parent_session_uuid: str
    user_name: str
    language: str
    created_at: datetime
    # The chat user whose exchanges this session keeps (`chat:<userid>` sessions), else None.
    chat_userid: str | None = None

    @classmethod
    def of(cls, session: Session) -> SessionView:
        userid = session.session_uuid.removeprefix(CHAT_SESSION_PREFIX)
        return cls(
            session_uuid=session.session_uuid,
            parent_session_uuid=session.parent_session_uuid,
            user_name=session.user_name,
            language=session.language,
            created_at=session.created_at,
            chat_userid=userid if session.session_uuid.startswith(CHAT_SESSION_PREFIX) else None,
        )


class ThreadView(Model):
    thread: str
    sessions: list[SessionView]


class ScopeView(Model):
    """A memory-bank scope that holds facts (chat users' scopes `{"userid": ...}` included)."""

    scope: dict[str, str]
    thread: str  # what /v1/inspect/memories takes to list the scope's facts
    facts: int


class ThreadsResponse(Model):
    """A page of the key's sessions (grouped by thread: a thread's sessions may continue on the
    next page) and a page of its fact scopes, each with the cursor of its next page."""

    status: Literal["success"] = "success"
    threads: list[ThreadView]
    scopes: list[ScopeView]
    # Send as `after` for the next page of sessions; None on the last one.
    next_after: str | None = None
    # Send as `scopes_after` for the next page of scopes; None on the last one.
    next_scopes_after: str | None = None


class TurnView(Model):
    dialog_uuid: str
    seq: int
    status: TurnStatus
    memory_id: str | None
    user_name: str
    npc_id: str | None
    type: TurnType
    query: str
    answer: str
    timestamp: datetime
    created_at: datetime

    @classmethod
    def of(cls, turn: Turn) -> TurnView:
        return cls.model_validate(turn.model_dump(include=set(cls.model_fields)))


class MemoryView(Model):
    memory_id: str
    session_uuid: str
    parent_session_uuid: str
    fields: MemoryFields
    source_dialog_uuids: list[str]
    first_seq: int
    last_seq: int
    created_at: datetime
    metadata: dict[str, str | int | float]
    scope: dict[str, str]
    is_fact: bool
    # The memory this one was copied from by a fork (`metadata.forked_from`), else None.
    forked_from: str | None
    source_text: str
    # When its facts were said, which key facts later statements replaced, a fact's revisions.
    life: MemoryLife = Field(default_factory=MemoryLife)


class TurnCounts(Model):
    buffered: int = 0
    extracted: int = 0
    forgotten: int = 0


class SessionResponse(Model):
    status: Literal["success"] = "success"
    session: SessionView
    counts: TurnCounts
    turns: list[TurnView]
    memories: list[MemoryView]


class MemoriesResponse(Model):
    status: Literal["success"] = "success"
    memories: list[MemoryView]
    # The thread's character registry: each character's one name → the aliases folded into it.
    characters: dict[str, list[str]]
    next_after: str | None = Field(None, description="pass as `after` for the next page; null at the end")


class QueueResponse(Model):
    status: Literal["success"] = "success"
    # Null where the queue cannot list its jobs (SQS: only the worker may receive from it).
    pending: list[Job] | None
    dead: list[DeadJob] | None


class DeletePreview(Model):
    """What DELETE /v1/engine/delete/ would do with the same two ids, computed without writing."""

    status: Literal["success"] = "success"
    deleted_memories: list[str]
    deleted_dialogs: list[str]
    rebuffered_dialogs: list[str]
    # Turns kept as history but never extracted again (a deleted memory's turns).
    forgotten_dialogs: list[str]


class ExtractRequest(Body):
    session_uuid: str = Identifier


class ExtractResponse(Model):
    status: Literal["success"] = "success"
    message: str
    buffered: int
