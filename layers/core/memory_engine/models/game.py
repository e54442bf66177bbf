"""Bodies of the game-NPC memory API (docs/api.md §2): the `{"code", "msg", "data"}` envelope.

Field names (`memory_item`, `BotIndex`, `CreateTime`, ...) are the contract of existing game
clients, spelled as they spell them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import Field, field_validator

from memory_engine.models.api import MAX_TURN_CHARS, Body, Identifier, IdentifierStr, no_nul
from memory_engine.models.bank import Sparse, absent_when_none
from memory_engine.models.base import Model
from memory_engine.models.domain import Turn, TurnType

MAX_RECORDED_CHATS = 100
MAX_GAME_PAGE_SIZE = 1_000
ALL_NPCS = "all"


class GameMemoryRequest(Body):
    session_id: str = Identifier
    # Additive: only this npc's turns (counters still cover the whole session).
    npc_id: IdentifierStr | None = None
    # Additive: pages of a long history; without page_size the whole history comes back.
    page_size: int | None = Field(None, ge=1, le=MAX_GAME_PAGE_SIZE)
    page_token: str | None = Field(None, max_length=200)


def unix_seconds(moment: datetime) -> str:
    return str(int(moment.astimezone(UTC).timestamp()))


class GameMemoryItem(Model):
    SessionID: str
    Source: str
    BotIndex: str
    Message: str
    Reply: str
    Type: int
    CreateTime: str
    UpdateTime: str

    @classmethod
    def of(cls, turn: Turn) -> GameMemoryItem:
        """`Source` says how the turn came in; `CreateTime` is when it was said, `UpdateTime`
        when it was stored (the same for live play, earlier for imported history)."""
        return cls(
            SessionID=turn.session_uuid,
            Source="recordmemory" if turn.type is TurnType.RECORDED else "consolidate",
            BotIndex=turn.npc_id or "",
            Message=turn.query,
            Reply=turn.answer,
            Type=int(turn.type),
            CreateTime=unix_seconds(turn.timestamp),
            UpdateTime=unix_seconds(turn.created_at),
        )


class GameMemoryData(Sparse):
    memory_item: list[GameMemoryItem]
    counters: dict[str, int]
    next_page_token: str | None = Field(None, exclude_if=absent_when_none)


class GameMemoryResponse(Model):
    code: int = 0
    msg: str = "ok"
    data: GameMemoryData


class RecordedChat(Body):
    # The npc that replied; optional, as on consolidate (such a turn counts only under "all").
    npc_id: IdentifierStr | None = None
    message: str = Field(max_length=MAX_TURN_CHARS)
    reply: str = Field("", max_length=MAX_TURN_CHARS)
    # Additive: a dialog uuid of the caller's, which makes a retried call store the chat once.
    uuid: str | None = Field(None, min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$")

    _no_nul = field_validator("message", "reply")(no_nul)


class RecordMemoryRequest(Body):
    session_id: str = Identifier
    chats: list[RecordedChat] = Field(min_length=1, max_length=MAX_RECORDED_CHATS)


class RecordMemoryResponse(Model):
    code: int = 0
    msg: str
