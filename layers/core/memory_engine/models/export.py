"""A tenant's data as export writes it and import reads it (docs/export.md): one JSON record per
line, each with a `kind` and a `version`, the record's own fields beside them.

The fields are the stored records' (`Session`, `Turn`, `Memory` of models/domain.py) without the
tenant (import gives the target's) and without vectors (import embeds with the target's model), so
a field added to a record later travels without a change here: an older export lacks it and takes
its default on import.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from memory_engine.errors import InvalidInput
from memory_engine.models.base import Model
from memory_engine.models.domain import Memory, Session, Turn
from memory_engine.models.strict import StrictBody

EXPORT_VERSION = 1
Kind = Literal["export", "session", "turn", "memory", "characters"]
# What a record never carries: the tenant (the target's on import) and vectors (re-embedded).
TURN_LEFT_OUT = frozenset({"tenant", "embedding"})
MEMORY_LEFT_OUT = frozenset({"tenant", "embedding", "turn_embeddings", "window_embeddings"})
# next_seq is the store's counter: an import continues after its last turn, as a fork does.
SESSION_LEFT_OUT = frozenset({"tenant", "next_seq"})
MAX_CURSOR_CHARS = 2_000


class ExportRecord(Model):
    """One line: `kind`, `version`, then the fields of that kind of record."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": True})

    kind: Kind = Field(description="export (the header line), session, turn, memory or characters")
    version: int = Field(EXPORT_VERSION, description="the format's version; import reads 1")

    @field_validator("version")
    @classmethod
    def _known(cls, version: int) -> int:
        if version != EXPORT_VERSION:
            raise ValueError(f"version {version} is not one this engine reads (it reads {EXPORT_VERSION})")
        return version

    def data(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def session_record(session: Session) -> ExportRecord:
    return ExportRecord(kind="session", **session.model_dump(mode="json", exclude=set(SESSION_LEFT_OUT)))


def turn_record(turn: Turn) -> ExportRecord:
    return ExportRecord(kind="turn", **turn.model_dump(mode="json", exclude=set(TURN_LEFT_OUT)))


def memory_record(memory: Memory) -> ExportRecord:
    return ExportRecord(kind="memory", **memory.model_dump(mode="json", exclude=set(MEMORY_LEFT_OUT)))


def characters_record(thread: str, registry: dict[str, list[str]]) -> ExportRecord:
    return ExportRecord(kind="characters", thread=thread, registry=registry)


class Selection(StrictBody):
    """What to export: the whole tenant (neither), one thread, or the facts of one scope."""

    thread: str | None = Field(
        None, min_length=1, max_length=256, description="one thread: its sessions, turns, memories, facts"
    )
    scope: dict[str, str] | None = Field(
        None, description="the facts whose scope holds every one of these key/value pairs (a user's)"
    )

    @model_validator(mode="after")
    def _one(self) -> Selection:
        if self.thread is not None and self.scope is not None:
            raise ValueError("send thread or scope, not both")
        if self.scope is not None and not self.scope:
            raise ValueError('scope must name at least one key, e.g. {"user_id": "123"}')
        return self


class Cursor(Model):
    """Where the next page starts: sessions (keyset on thread, session) then the other memories
    (keyset on memory id). Opaque to callers: URL-safe base64 of its JSON."""

    stage: Literal["sessions", "memories"] = "sessions"
    after_session: tuple[str, str] | None = None
    after_memory: str | None = None

    def encode(self) -> str:
        return base64.urlsafe_b64encode(self.model_dump_json().encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str | None) -> Cursor:
        if not token:
            return cls()
        try:
            padded = token + "=" * (-len(token) % 4)
            return cls.model_validate_json(base64.urlsafe_b64decode(padded.encode()))
        except (ValidationError, binascii.Error, ValueError, UnicodeDecodeError):
            raise InvalidInput(
                "cursor is not one this route gave: send the next_cursor of the previous page, or none.",
                [{"field": "cursor", "message": "not a cursor of this route"}],
            ) from None


class ExportPage(Model):
    records: list[ExportRecord]
    next_cursor: str | None = Field(
        None,
        description="send it as `cursor` for the next page; absent on the last",
        exclude_if=lambda value: value is None,
    )


class ImportReport(Model):
    """What an import did, by kind: records written, and records already there (left alone)."""

    written: dict[str, int] = Field(default_factory=dict)
    existing: dict[str, int] = Field(default_factory=dict)


def parse_selection(thread: str | None, scope_json: str | None) -> Selection:
    """The export route's query parameters as a selection; a 422 naming the parameter otherwise."""
    scope: Any = None
    if scope_json:
        try:
            scope = json.loads(scope_json)
        except ValueError:
            raise InvalidInput(
                'scope must be a JSON object of strings, e.g. {"user_id":"123"}.',
                [{"field": "scope", "message": "not JSON"}],
            ) from None
    try:
        return Selection.model_validate({"thread": thread, "scope": scope})
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "thread"
        raise InvalidInput(f"{field}: {first['msg']}", [{"field": field, "message": first["msg"]}]) from None
