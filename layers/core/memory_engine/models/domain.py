"""Domain records: what the store keeps and the use cases pass around."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import threading
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from enum import IntEnum, StrEnum

from pydantic import ConfigDict, Field

from memory_engine.errors import Conflict
from memory_engine.models.base import Model
from memory_engine.models.life import MemoryLife

MEMORY_ID_PATTERN = re.compile(r"^\d{8}_\d{6}_[0-9a-f]{6}$")


def is_memory_id(value: str) -> bool:
    """Memory ids look like `20260318_040037_d60e66`; dialog uuids never do."""
    return bool(MEMORY_ID_PATTERN.match(value))


class TurnStatus(StrEnum):
    BUFFERED = "buffered"  # waiting for extraction, searchable as a raw turn
    EXTRACTED = "extracted"  # folded into the memory named by `memory_id`
    FORGOTTEN = "forgotten"  # its memory was deleted on request; kept as history, never re-extracted


class TurnType(IntEnum):
    PLAY = 0  # consolidate / chat
    RECORDED = 1  # recorded through the game API's recordmemory


class Session(Model):
    model_config = ConfigDict(frozen=True)

    tenant: str
    session_uuid: str
    parent_session_uuid: str
    user_name: str = "당신"
    language: str = "ko"
    created_at: datetime
    next_seq: int = 0


def check_thread(session_uuid: str, thread: str, requested: str) -> None:
    """Refuse a turn that names another thread than its stored session's (`thread`): a session
    belongs to the thread of its first turn. The stores call it inside their one write."""
    if requested != thread:
        raise Conflict(
            f"Session '{session_uuid}' belongs to thread '{thread}', not '{requested}': "
            "send the same parent_session_uuid as its first turn.",
            [{"field": "parent_session_uuid", "message": "differs from the session's thread"}],
        )


class Turn(Model):
    """One dialogue turn: a user message and the reply to it, in session order (`seq`)."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    session_uuid: str
    dialog_uuid: str
    seq: int
    query: str
    answer: str = ""
    user_name: str = "당신"
    npc_id: str | None = None
    type: TurnType = TurnType.PLAY
    timestamp: datetime
    created_at: datetime
    status: TurnStatus = TurnStatus.BUFFERED
    memory_id: str | None = None
    length_limit: int = 1000
    # The memories extracted from this turn expire this long after their extraction (None: they
    # do not): a thread's temporary memories (`options.memory_ttl_seconds` of consolidate).
    memory_ttl_seconds: int | None = None
    # The turn's passage vector, stored once the worker embedded it (None until then): retrieve
    # scores a buffered turn with it instead of embedding the turn on the request path.
    embedding: list[float] | None = Field(None, repr=False)

    def same_content(self, other: Turn) -> bool:
        """Idempotency check: a retried consolidate (`other`, against this stored turn) carries the
        same words and speakers, and the same time when it names one. A turn sent without a
        timestamp takes its arrival time (its `timestamp` is its `created_at`), so a retry of it,
        arriving later, is the same turn; one that names another time is other content (409), as
        a time changes what extraction and retrieval make of the turn."""
        named_time = other.timestamp != other.created_at
        return (self.query, self.answer, self.user_name, self.npc_id) == (
            other.query,
            other.answer,
            other.user_name,
            other.npc_id,
        ) and (not named_time or self.timestamp == other.timestamp)

    def text(self) -> str:
        """The turn as one line of dialogue, speaker first."""
        line = f"{self.user_name}: {self.query}".strip()
        if self.answer:
            speaker = self.npc_id or "assistant"
            line += f"\n{speaker}: {self.answer}"
        return line


# A memory's bounds (docs/api.md), kept by every extractor: the built-in one and the LLM's schema.
MAX_KEYWORDS = 65
MAX_KEY_FACTS = 18


class MemoryFields(Model):
    """The structure extraction produces for one batch (bounds from docs/api.md)."""

    summary: str
    keywords: list[str] = Field(default_factory=list, max_length=MAX_KEYWORDS)
    key_facts: list[str] = Field(default_factory=list, max_length=MAX_KEY_FACTS)
    key_dialogue: list[str] = Field(default_factory=list)
    intent: str = ""
    location: str = ""
    characters: list[str] = Field(default_factory=list)


class Memory(Model):
    """A memory extracted from consecutive turns of one session, searchable under its thread.

    Facts (memory bank, chat memory) are memories too, in the same store and index: one short
    sentence as `fields.summary`, no session (`session_uuid` ""), no source turns, `scope` the
    caller's scope, `parent_session_uuid` its `scope_key`, and `metadata["kind"] == "fact"`.
    """

    model_config = ConfigDict(frozen=True)

    tenant: str
    memory_id: str
    session_uuid: str
    parent_session_uuid: str
    fields: MemoryFields
    source_dialog_uuids: list[str]
    first_seq: int
    last_seq: int
    embedding: list[float] = Field(default_factory=list, repr=False)
    # One vector per source turn, in source order: the index searches a memory by its turns too.
    # Empty for memories written before turn vectors existed (their turns inherit `embedding`).
    turn_embeddings: list[list[float]] = Field(default_factory=list, repr=False)
    # One vector per source turn of the turn with its neighbours in the batch (its ±1 window), in
    # source order: retrieval mixes its cosine into the turn's. Empty for memories written before
    # window vectors existed (their turns are scored by their own vector alone).
    window_embeddings: list[list[float]] = Field(default_factory=list, repr=False)
    # The batch's dialogue as fed to extraction: indexed for lexical search beside the fields.
    source_text: str = ""
    created_at: datetime
    metadata: dict[str, str | int | float] = Field(default_factory=dict)
    # The memory-bank scope it was created under; empty for memories extracted by the engine,
    # whose scope is their thread (read `visible_scope`, which is right for both).
    scope: dict[str, str] = Field(default_factory=dict)
    # When its facts were stated and which of them later statements replaced (models.life).
    life: MemoryLife = Field(default_factory=MemoryLife)
    # When the memory stops existing for every read (None: never). The sweep then removes it with
    # the cascade of a delete; until it runs, the stores answer as if it were gone already.
    expires_at: datetime | None = None

    @property
    def stated_at(self) -> datetime:
        """Event time of the memory's facts: `life.valid_from`, else its creation."""
        return self.life.valid_from or self.created_at

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    def retained(self, days: int | None) -> Memory:
        """The memory under a tenant's retention of `days` (None: none): it expires `days` after
        its creation, or sooner if it was asked to."""
        if days is None:
            return self
        limit = self.created_at + timedelta(days=days)
        if self.expires_at is not None and self.expires_at <= limit:
            return self
        return self.model_copy(update={"expires_at": limit})

    @property
    def content(self) -> str:
        return self.fields.summary

    @property
    def visible_scope(self) -> dict[str, str]:
        """The scope the memory bank shows and matches: the stored one, else the thread's."""
        return dict(self.scope) or {THREAD_SCOPE_KEY: self.parent_session_uuid}

    @property
    def is_fact(self) -> bool:
        return self.metadata.get("kind") == FACT_KIND


FACT_KIND = "fact"
# The metadata key of a fork's copied memory naming its original (a retried fork is told by it).
FORKED_FROM = "forked_from"
THREAD_SCOPE_KEY = "parent_session_uuid"
SCOPE_THREAD_PREFIX = "scope:"
SCOPE_THREAD_PATTERN = re.compile(r"^scope:[0-9a-f]{40}$")


def scope_key(scope: Mapping[str, str]) -> str:
    """The thread that holds a scope's memories: exact match on the whole scope, in any key order.

    `{"parent_session_uuid": t}` is the engine thread `t` itself, so engine memories and facts of
    that scope share one thread. Any other scope is `scope:` + 40 hex digits of the SHA-256 of its
    canonical JSON (sorted keys): same keys and values (case-sensitive) give the same thread,
    anything else another, and the key stays short enough for every backend's key limits.
    """
    thread = scope.get(THREAD_SCOPE_KEY)
    if len(scope) == 1 and thread is not None and not SCOPE_THREAD_PATTERN.match(thread):
        return thread
    canonical = json.dumps(dict(sorted(scope.items())), ensure_ascii=False, separators=(",", ":"))
    return SCOPE_THREAD_PREFIX + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:40]


def is_reserved_thread(thread: str) -> bool:
    """Thread names of the form `scope:<40 hex>` are how scopes are keyed: callers cannot pick them."""
    return bool(SCOPE_THREAD_PATTERN.match(thread))


_ID_LOCK = threading.Lock()
_last_id = ""


def new_memory_id(created_at: datetime) -> str:
    """`YYYYMMDD_HHMMSS_xxxxxx`: the UTC creation second, then 6 lowercase hex digits that sort in
    creation order within it: the microsecond (×16) plus one random digit, so two processes'
    ids of one microsecond still differ.

    Ids made by one process only ever grow (one more than the last when the clock has not moved
    on: a fixed test clock, a fork copying memories in one instant), so sorting ids is sorting by
    creation, which 6 random digits did not give within a second."""
    global _last_id
    moment = created_at.astimezone(UTC)
    prefix = f"{moment:%Y%m%d_%H%M%S}_"
    with _ID_LOCK:
        number = moment.microsecond * 16 + secrets.randbelow(16)
        if _last_id.startswith(prefix):
            number = max(number, int(_last_id[len(prefix) :], 16) + 1)
        # Past 0xffffff (a million ids in one second of one process) the order is given up, not the id.
        memory_id = f"{prefix}{number % 0x1000000:06x}"
        _last_id = memory_id
    return memory_id
