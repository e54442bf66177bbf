"""Retrieve knows time: the event-time window of a request, and hits put in time order (what
replaced a fact before the fact), with whether each still holds and, on request, its history
(`retrieval.timeline`)."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.models.api import RetrievedMemory, RetrieveRequest
from memory_engine.models.domain import Memory
from memory_engine.retrieval.timeline import Window, history, is_current, query_topics, replacement


def window_of(request: RetrieveRequest) -> Window:
    options = request.options
    return Window(as_of=options.as_of, since=options.since, until=options.until)


def in_time(
    engine: Engine,
    tenant: str,
    found: list[tuple[RetrievedMemory, Memory | None]],
    window: Window,
    request: RetrieveRequest,
    limit: int,
) -> list[RetrievedMemory]:
    """The hits with what time says of them: whether each still holds for the query (as of
    `options.as_of`), its history on request, and a hit that is no longer current put right
    after the memory that replaced it, which is read from the store when the ranking left it out
    (so the current value comes first: `retrieval.timeline`)."""
    as_of = request.options.as_of
    topics = query_topics(request.user_input.query)
    given = {hit.memory_id for hit, _ in found}
    out: list[RetrievedMemory] = []
    placed: set[str] = set()
    for position, (hit, memory) in enumerate(found):
        if hit.memory_id in placed:
            continue
        if memory is None:
            out.append(hit)
            placed.add(hit.memory_id)
            continue
        current = is_current(memory, topics, as_of)
        if not current:
            newer = _replacing(engine, tenant, memory, topics, window, found[position + 1 :], given)
            if newer is not None and newer[0].memory_id not in placed:
                newer_hit, newer_memory = newer
                score = max(newer_hit.score, hit.score)
                out.append(
                    _with_time(newer_hit.model_copy(update={"score": score}), newer_memory, request, topics)
                )
                placed.add(newer_hit.memory_id)
        out.append(_with_time(hit, memory, request, topics))
        placed.add(hit.memory_id)
    return out[:limit]


def _replacing(
    engine: Engine,
    tenant: str,
    memory: Memory,
    topics: frozenset[str],
    window: Window,
    later: list[tuple[RetrievedMemory, Memory | None]],
    given: set[str],
) -> tuple[RetrievedMemory, Memory] | None:
    """The hit of the memory that replaced `memory`'s asked-about fact: from the later hits, else
    read from the store (scored as the hit it goes before). None when it is gone or outside the
    window."""
    memory_id = replacement(memory, topics, window.as_of)
    if memory_id is None:
        return None
    for hit, other in later:
        if hit.memory_id == memory_id and other is not None:
            return hit, other
    newer = engine.store.get_memory(tenant, memory_id) if memory_id not in given else None
    if newer is None or not window.admits(newer.stated_at):
        return None
    hit = RetrievedMemory(
        memory_id=newer.memory_id,
        content=newer.content,
        score=0.0,
        kind="memory",
        session_uuid=newer.session_uuid,
        source_dialog_uuids=newer.source_dialog_uuids,
        score_parts={"replaces": 0.0},
        stated_at=newer.stated_at,
    )
    return hit, newer


def _with_time(
    hit: RetrievedMemory, memory: Memory, request: RetrieveRequest, topics: frozenset[str]
) -> RetrievedMemory:
    as_of = request.options.as_of
    update: dict[str, object] = {"current": is_current(memory, topics, as_of)}
    if request.options.history:
        update["history"] = history(memory, as_of)
    return hit.model_copy(update=update)
