"""The memory inspector's reads: what a tenant's engine holds, as views (`models.inspect`).

Each function answers one `/v1/inspect/...` route. They read whole sessions, threads or the
tenant: meant for a developer looking at a service, not for the request path of an application.
"""

from __future__ import annotations

from collections import Counter
from itertools import groupby

from memory_engine.engine import Engine
from memory_engine.errors import NotFound, Unavailable
from memory_engine.models.domain import FORKED_FROM, Memory, scope_key
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
    )


def threads(engine: Engine, tenant: str) -> ThreadsResponse:
    """The tenant's threads with their sessions, and the memory-bank scopes that hold facts."""
    sessions = engine.store.list_sessions(tenant)
    listed = [
        ThreadView(thread=thread, sessions=[SessionView.of(session) for session in group])
        for thread, group in groupby(sessions, key=lambda session: session.parent_session_uuid)
    ]
    facts = [memory for memory in engine.store.iter_memories(tenant) if memory.is_fact]
    counts = Counter(scope_key(memory.visible_scope) for memory in facts)
    scopes = {scope_key(memory.visible_scope): memory.visible_scope for memory in facts}
    return ThreadsResponse(
        threads=listed,
        scopes=[ScopeView(scope=scopes[key], thread=key, facts=counts[key]) for key in sorted(scopes)],
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
