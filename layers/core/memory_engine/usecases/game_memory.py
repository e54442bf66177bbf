"""The game API's read: a session's whole raw dialogue history with per-npc counters."""

from __future__ import annotations

import base64
import binascii
from collections import Counter

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput, NotFound
from memory_engine.models.game import (
    ALL_NPCS,
    GameMemoryData,
    GameMemoryItem,
    GameMemoryRequest,
    GameMemoryResponse,
)


def run(engine: Engine, tenant: str, request: GameMemoryRequest) -> GameMemoryResponse:
    """Every turn of the session oldest first (Type 0 play, Type 1 recorded), or one npc's, or
    one page of them. `counters` always count the whole session: turns per npc and `all`."""
    if engine.store.get_session(tenant, request.session_id) is None:
        raise NotFound(
            f"No session '{request.session_id}': a session exists once its first turn was consolidated.",
            [{"field": "session_id", "message": "unknown session"}],
        )
    turns = engine.store.list_turns(tenant, request.session_id)
    counters = Counter(turn.npc_id for turn in turns if turn.npc_id)
    chosen = [turn for turn in turns if request.npc_id is None or turn.npc_id == request.npc_id]
    next_token = None
    if request.page_size is not None:
        after = decode_page_token(request.page_token) if request.page_token else -1
        chosen = [turn for turn in chosen if turn.seq > after]
        if len(chosen) > request.page_size:
            chosen = chosen[: request.page_size]
            next_token = encode_page_token(chosen[-1].seq)
    elif request.page_token:
        raise InvalidInput(
            "page_token needs page_size: send both, or neither for the whole history.",
            [{"field": "page_size", "message": "is required with page_token"}],
        )
    data = GameMemoryData(
        memory_item=[GameMemoryItem.of(turn) for turn in chosen],
        counters={**dict(counters), ALL_NPCS: len(turns)},
        next_page_token=next_token,
    )
    return GameMemoryResponse(data=data)


def encode_page_token(seq: int) -> str:
    return base64.urlsafe_b64encode(f"seq:{seq}".encode()).decode("ascii")


def decode_page_token(token: str) -> int:
    try:
        kind, _, value = base64.urlsafe_b64decode(token.encode("ascii")).decode("ascii").partition(":")
        if kind == "seq":
            return int(value)
    except (binascii.Error, UnicodeError, ValueError):
        pass
    raise InvalidInput(
        "page_token is not one this API gave: send the next_page_token as is.",
        [{"field": "page_token", "message": "invalid token"}],
    )
