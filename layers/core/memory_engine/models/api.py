"""Request and response bodies of the native engine API (docs/api.md §1). Field names are the contract."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, field_validator, model_validator

from memory_engine.models.base import Model
from memory_engine.models.domain import is_reserved_thread
from memory_engine.models.expiry import MAX_TTL_SECONDS
from memory_engine.models.life import EventDate
from memory_engine.models.messages import CHAT_SESSION_PREFIX
from memory_engine.models.strict import StrictBody
from memory_engine.models.timestamps import Timestamp

# Ids name store keys and index documents: bounded and free of control characters.
NO_CONTROL_CHARS = r"^[^\x00-\x1f\x7f]+$"
Identifier = Field(min_length=1, max_length=256, pattern=NO_CONTROL_CHARS)
IdentifierStr = Annotated[str, StringConstraints(min_length=1, max_length=256, pattern=NO_CONTROL_CHARS)]
MAX_TURN_CHARS = 100_000


def not_reserved_thread(value: str | None) -> str | None:
    """Thread names shaped like the keys of memory-bank scopes would mix their memories in."""
    if value is not None and is_reserved_thread(value):
        raise ValueError("names of the form scope:<40 hex digits> are reserved for memory-bank scopes")
    return value


def not_reserved_session(value: str) -> str:
    """A session named like a chat user's (`chat:<userid>`) would receive that user's exchanges."""
    if value[: len(CHAT_SESSION_PREFIX)].lower() == CHAT_SESSION_PREFIX:
        raise ValueError(
            f"names starting with '{CHAT_SESSION_PREFIX}' are reserved for the sessions of chat users "
            "(POST /v1/chat/completions with a userid): choose another session name"
        )
    return value


def no_nul(value: str) -> str:
    """Dialogue text may hold anything but NUL (which no store keeps intact)."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


class Body(StrictBody):
    """A native or game request body: an unknown field is a 422 naming it (see models.strict)."""


class NewDialog(Body):
    uuid: str = Identifier
    query: str = Field(max_length=MAX_TURN_CHARS)
    answer: str = Field("", max_length=MAX_TURN_CHARS)
    # When it was said (default now): the rule is models.timestamps'.
    timestamp: Timestamp | None = None
    npc_id: IdentifierStr | None = None

    _no_nul = field_validator("query", "answer")(no_nul)


class ConsolidateOptions(Body):
    length_limit: int = Field(1000, ge=1, le=MAX_TURN_CHARS)
    force_summary: bool = False
    memory_ttl_seconds: int | None = Field(
        None,
        ge=1,
        le=MAX_TTL_SECONDS,
        description="memories extracted from this turn expire this many seconds after extraction",
    )


class ConsolidateRequest(Body):
    session_uuid: str = Identifier
    parent_session_uuid: str = Identifier
    new_dialog: NewDialog
    user_name: str = Field("당신", min_length=1, max_length=256, pattern=NO_CONTROL_CHARS)
    language: str = Field("ko", min_length=2, max_length=16, pattern=NO_CONTROL_CHARS)
    options: ConsolidateOptions = Field(default_factory=ConsolidateOptions)

    _thread_not_reserved = field_validator("parent_session_uuid")(not_reserved_thread)
    _session_not_reserved = field_validator("session_uuid")(not_reserved_session)


class StatusResponse(Model):
    status: Literal["success"] = "success"
    message: str | None = None


class ConsolidateResponse(StatusResponse):
    """The consolidate answer: `status` and `message` as ever, and what became of the buffer (additive)."""

    extraction_queued: bool = Field(
        False, description="this turn queued an extraction of the session (threshold or force_summary)"
    )
    buffered: int = Field(0, description="the session's turns waiting for extraction, this one included")


class RecentDialog(Body):
    """A dialog the caller has in its prompt; only `uuid` is read. The other fields of a
    `new_dialog` are accepted too, so a client can echo the dialogs it sent as they were."""

    uuid: str = Identifier
    query: str | None = Field(None, max_length=MAX_TURN_CHARS)
    answer: str | None = Field(None, max_length=MAX_TURN_CHARS)
    timestamp: Timestamp | None = None
    npc_id: IdentifierStr | None = None


class UserInput(Body):
    query: str = Field(min_length=1, max_length=10_000)


class RetrieveOptions(Body):
    limit: int = Field(5, ge=1, le=50)
    max_tokens: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="pack the hits into at most this many tokens of `content`, best evidence first",
    )
    explain: bool = Field(False, description="add each hit's `score_parts` (what its score is made of)")
    # Event time (docs/api.md "Time"): additive, all optional.
    as_of: Timestamp | None = Field(
        None,
        description="what was true then: later statements are left out and do not replace",
    )
    since: Timestamp | None = Field(None, description="only what was said at or after this moment")
    until: Timestamp | None = Field(None, description="only what was said at or before this moment")
    history: bool = Field(False, description="add each hit's `history`: its facts later statements replaced")

    @model_validator(mode="after")
    def _range_in_order(self) -> RetrieveOptions:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError("options.since must not be after options.until: swap them, or leave one out")
        return self


class RetrieveRequest(Body):
    parent_session_uuids: list[IdentifierStr] = Field(min_length=1, max_length=100)
    last_dialog_uuid: IdentifierStr | None = None
    recent_dialogs: list[IdentifierStr | RecentDialog] = Field(default_factory=list, max_length=1000)
    user_input: UserInput
    options: RetrieveOptions = Field(default_factory=RetrieveOptions)

    @field_validator("last_dialog_uuid", mode="before")
    @classmethod
    def _empty_is_absent(cls, value: object) -> object:
        # A first call has no last dialog, and clients send "" for it (API.md): same as absent.
        return None if value == "" else value

    def excluded_dialogs(self) -> set[str]:
        """Dialogs the caller already has in its prompt."""
        excluded = {item if isinstance(item, str) else item.uuid for item in self.recent_dialogs}
        if self.last_dialog_uuid:
            excluded.add(self.last_dialog_uuid)
        return excluded


class TurnEvidence(Model):
    """One turn of a hit that matched the query, and how well (the hit's fused turn score)."""

    dialog_uuid: str
    score: float
    text: str


class FactHistory(Model):
    """A fact of a hit that a later statement replaced: it held from `valid_from` to `invalid_at`."""

    fact: str
    valid_from: datetime | None = None
    invalid_at: datetime
    # The memory (or bank fact) whose statement replaced it; null for a caller's retirement.
    superseded_by: str | None = None
    reason: str = "update"


class RetrievedMemory(Model):
    memory_id: str
    content: str
    score: float
    # Additive fields (docs/api.md welcomes them); the three above never change.
    kind: Literal["memory", "dialog"]
    session_uuid: str
    source_dialog_uuids: list[str]
    # The hit's turns that matched, best first (a raw turn hit: itself).
    evidence: list[TurnEvidence] = Field(default_factory=list)
    # With options.explain: the parts the score adds up from (see retrieval.fusion).
    score_parts: dict[str, float] | None = None
    # With options.max_tokens: true when `content` was cut to the turns in `evidence` (whole turns).
    truncated: bool = False
    # When the hit's facts were said (event time: its first turn's timestamp); null if unknown.
    stated_at: datetime | None = None
    # False when a later statement replaced the hit's facts that the query asks about (a newer
    # hit holds the current value and comes before it); with options.as_of, as of that moment.
    current: bool = True
    # With options.history: the hit's facts that later statements replaced, oldest first.
    history: list[FactHistory] | None = None
    # The times the hit's turns spoke of in relative words ("yesterday", "지난달"), resolved at
    # write against each turn's own timestamp: the memory's `life.event_dates`; [] for a
    # buffered turn (resolved when it becomes a memory) and for a memory that named none.
    event_dates: list[EventDate] = Field(default_factory=list)


class RetrieveResponse(Model):
    status: Literal["success"] = "success"
    data: list[RetrievedMemory]
    # With options.max_tokens: tokens of `content` returned, counted by retrieval.tokens.
    tokens: int | None = None
    # Why `data` is empty when hits were found but none fit options.max_tokens; else null.
    message: str | None = None


class DeleteRequest(Body):
    session_uuid: str = Identifier
    dialog_uuid: str = Identifier


class DeleteResult(Model):
    deleted_memories: list[str]
    deleted_dialogs: list[str]
    rebuffered_dialogs: list[str]


class DeleteResponse(Model):
    status: Literal["success"] = "success"
    message: str
    data: DeleteResult


class ForkRequest(Body):
    source_session_uuid: str = Identifier
    target_session_uuid: str = Identifier
    cutoff_dialog_uuid: str = Identifier
    target_parent_session_uuid: IdentifierStr | None = None

    # The target session is its own thread when no parent is named.
    _thread_not_reserved = field_validator("target_session_uuid", "target_parent_session_uuid")(
        not_reserved_thread
    )
    _target_not_reserved = field_validator("target_session_uuid")(not_reserved_session)


class ForkResult(Model):
    target_session_uuid: str
    target_parent_session_uuid: str
    copied_dialogs: int
    copied_memories: list[str]
    buffered_dialogs: list[str]


class ForkResponse(Model):
    status: Literal["success"] = "success"
    message: str
    data: ForkResult


class EmbedRequest(Body):
    text: str | list[str]
    mode: Literal["query", "passage"] = "query"

    @field_validator("text")
    @classmethod
    def _bounded(cls, value: str | list[str]) -> str | list[str]:
        texts = [value] if isinstance(value, str) else value
        if not texts:
            raise ValueError("must be a string or a non-empty list of strings")
        if len(texts) > 256:
            raise ValueError("at most 256 texts per request; split the list")
        if any(len(text) > MAX_TURN_CHARS for text in texts):
            raise ValueError(f"each text must be at most {MAX_TURN_CHARS} characters")
        return value


class EmbedResponse(Model):
    model_config = ConfigDict(extra="allow")

    dimension: int

    @classmethod
    def of(cls, vectors: list[list[float]], single: bool, dimension: int) -> EmbedResponse:
        payload: dict[str, Any] = {"dimension": dimension}
        payload["embedding" if single else "embeddings"] = vectors[0] if single else vectors
        return cls(**payload)


class HealthResponse(Model):
    status: Literal["ok"] = "ok"
    service: str = "memory-engine"
