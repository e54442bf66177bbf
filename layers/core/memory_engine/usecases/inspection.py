"""The memory inspector's reads: what a tenant's engine holds, as views (`models.inspect`).

Each function answers one `/v1/inspect/...` route. They read whole sessions or pages of a
tenant's threads, scopes and memories: meant for a developer looking at a service, not for the
request path of an application.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from itertools import groupby

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput, NotFound, Unavailable
from memory_engine.models.domain import FORKED_FROM, Memory
from memory_engine.models.inspect import (
    MemoriesResponse,
    MemoryView,
    QueueResponse,
    ScopeView,
    SessionResponse,
    SessionView,
    ThreadsResponse,
    ThreadView,
    TurnCounts,
    TurnView,
)
from memory_engine.ports import QueueInspector
from memory_engine.usecases.dead_jobs import with_resolution

MAX_PAGE = 500
DEFAULT_PAGE = 100


def memory_view(memory: Memory) -> MemoryView:
    origin = memory.metadata.get(FORKED_FROM)
    return MemoryView(
        memory_id=memory.memory_id,
        session_uuid=memory.session_uuid,
        parent_session_uuid=memory.parent_session_uuid,
        fields=memory.fields,
        source_dialog_uuids=memory.source_dialog_uuids,
        first_seq=memory.first_seq,
        last_seq=memory.last_seq,
        created_at=memory.created_at,
        metadata=memory.metadata,
        scope=memory.visible_scope,
        is_fact=memory.is_fact,
        forked_from=None if origin is None else str(origin),
        source_text=memory.source_text,
        life=memory.life,
    )


def threads(
    engine: Engine,
    tenant: str,
    after: str | None = None,
    scopes_after: str | None = None,
    limit: int = DEFAULT_PAGE,
) -> ThreadsResponse:
    """A page of the tenant's sessions grouped by thread, and a page of its memory-bank scopes
    with their fact counts: both at first, then the one (or both) whose cursor is sent. Each page reads as
    many sessions or fact keys as it shows, whatever the tenant holds, and never a memory but the
    one that names each scope."""
    size = max(1, min(limit, MAX_PAGE))
    response = ThreadsResponse(threads=[], scopes=[])
    first = after is None and scopes_after is None
    if first or after is not None:
        cursor = None if after is None else _session_cursor(after)
        sessions = engine.store.list_sessions(tenant, cursor, size + 1)  # one more: is there a next page?
        shown = sessions[:size]
        response.threads = [
            ThreadView(thread=thread, sessions=[SessionView.of(session) for session in group])
            for thread, group in groupby(shown, key=lambda session: session.parent_session_uuid)
        ]
        if len(sessions) > size:
            response.next_after = _encode_cursor([shown[-1].parent_session_uuid, shown[-1].session_uuid])
    if first or scopes_after is not None:
        scopes = engine.store.fact_scopes(tenant, scopes_after, size + 1)
        shown_scopes = scopes[:size]
        response.scopes = [ScopeView(scope=s.scope, thread=s.thread, facts=s.facts) for s in shown_scopes]
        if len(scopes) > size:
            response.next_scopes_after = shown_scopes[-1].thread
    return response


def _encode_cursor(parts: list[str]) -> str:
    raw = json.dumps(parts, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _session_cursor(token: str) -> tuple[str, str]:
    """The (thread, session) a `next_after` names; a 400 naming `after` for anything else."""
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError) as error:
        raise _bad_cursor() from error
    if not (
        isinstance(decoded, list) and len(decoded) == 2 and all(isinstance(part, str) for part in decoded)
    ):
        raise _bad_cursor()
    return decoded[0], decoded[1]


def _bad_cursor() -> InvalidInput:
    return InvalidInput(
        "after is not a cursor this API gave: send the next_after of the previous page as it is.",
        [{"field": "after", "message": "not a next_after of this route"}],
    )


def session(engine: Engine, tenant: str, session_uuid: str) -> SessionResponse:
    """One session: its turns in order with their buffer state, and the memories made of them."""
    found = engine.store.get_session(tenant, session_uuid)
    if found is None:
        raise NotFound(
            f"No session '{session_uuid}' for this key; list the threads to find one.",
            [{"field": "session_uuid", "message": "unknown session"}],
        )
    turns = engine.store.list_turns(tenant, session_uuid)
    counts = Counter(turn.status.value for turn in turns)
    return SessionResponse(
        session=SessionView.of(found),
        counts=TurnCounts(**counts),
        turns=[TurnView.of(turn) for turn in turns],
        memories=[memory_view(memory) for memory in engine.store.list_memories(tenant, session_uuid)],
    )


def memories(
    engine: Engine, tenant: str, thread: str, after: str | None = None, limit: int = 100
) -> MemoriesResponse:
    """A page of the thread's memories in id order (a scope's thread: its facts), with the
    thread's character registry."""
    size = max(1, min(limit, MAX_PAGE))
    page = engine.store.list_thread_memories(tenant, thread, after=after, limit=size)
    return MemoriesResponse(
        memories=[memory_view(memory) for memory in page],
        characters=engine.store.get_characters(tenant, thread),
        next_after=page[-1].memory_id if len(page) == size else None,
    )


def queue(engine: Engine, tenant: str) -> QueueResponse:
    """The tenant's waiting jobs (where the queue can list them) and its dead letters."""
    if not isinstance(engine.queue, QueueInspector):
        raise Unavailable("This queue cannot be inspected: it keeps no readable record of its jobs.")
    snapshot = engine.queue.snapshot(tenant)
    dead = None if snapshot.dead is None else with_resolution(engine.store, engine.limits, snapshot.dead)
    return QueueResponse(pending=snapshot.pending, dead=dead)
