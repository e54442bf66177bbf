"""Retrieve knows time: the event-time window of a request, and hits put in time order (what
replaced a fact before the fact), with whether each still holds and, on request, its history
(`retrieval.timeline`).

A turn still in the buffer replaces too: "I moved to Seoul" said an hour ago, not yet extracted,
comes before the memory that says the user lives in Busan, which is then not current for a
question about where the user lives (same slot and speaker, `supersede.statements`)."""

from __future__ import annotations

from datetime import datetime

from memory_engine.engine import Engine
from memory_engine.extraction.fact_slots import slot_of
from memory_engine.models.api import RetrievedMemory, RetrieveRequest
from memory_engine.models.domain import Memory
from memory_engine.retrieval.timeline import Window, history, is_current, query_topics, replacement
from memory_engine.usecases.supersede import statements


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
    excluded = request.excluded_dialogs()
    said = _buffered_statements(found, topics, as_of)
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
        newer_turn = _newer_turn(memory, said)
        if newer_turn is not None:
            current = False
            if newer_turn.memory_id not in placed:
                out.append(newer_turn.model_copy(update={"score": max(newer_turn.score, hit.score)}))
                placed.add(newer_turn.memory_id)
            out.append(_with_time(hit, memory, request, topics).model_copy(update={"current": False}))
            placed.add(hit.memory_id)
            continue
        if not current:
            newer = _replacing(engine, tenant, memory, topics, window, found[position + 1 :], given, excluded)
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


def _buffered_statements(
    found: list[tuple[RetrievedMemory, Memory | None]], topics: frozenset[str], as_of: datetime | None
) -> dict[tuple[str, str], RetrievedMemory]:
    """The buffered-turn hits that state a one-value fact the query asks about, by (slot, speaker):
    the latest of each (a turn hit's content is its line, speaker first)."""
    latest: dict[tuple[str, str], RetrievedMemory] = {}
    for hit, memory in found:
        if memory is not None or hit.stated_at is None or (as_of is not None and hit.stated_at > as_of):
            continue
        speaker, separator, words = hit.content.split("\n", 1)[0].partition(": ")
        slot = slot_of(words) if separator else None
        if slot is None or slot.split(":", 1)[0] not in topics:
            continue
        key = (slot, speaker.strip())
        if key not in latest or (latest[key].stated_at or hit.stated_at) < hit.stated_at:
            latest[key] = hit
    return latest


def _newer_turn(memory: Memory, said: dict[tuple[str, str], RetrievedMemory]) -> RetrievedMemory | None:
    """The buffered turn that replaces one of the memory's still-holding statements, if any."""
    if not said:
        return None
    replaced = {fact.index for fact in memory.life.key_facts}
    for statement in statements(memory):
        turn = said.get((statement.slot, statement.subject))
        fresh = turn is not None and turn.stated_at is not None and statement.stated_at < turn.stated_at
        if statement.index not in replaced and fresh:
            return turn
    return None


def _replacing(
    engine: Engine,
    tenant: str,
    memory: Memory,
    topics: frozenset[str],
    window: Window,
    later: list[tuple[RetrievedMemory, Memory | None]],
    given: set[str],
    excluded: set[str],
) -> tuple[RetrievedMemory, Memory] | None:
    """The hit of the memory that replaced `memory`'s asked-about fact: from the later hits, else
    read from the store (scored as the hit it goes before). None when it is gone, retired, outside
    the window, or built only from dialogs the caller already has."""
    memory_id = replacement(memory, topics, window.as_of)
    if memory_id is None:
        return None
    for hit, other in later:
        if hit.memory_id == memory_id and other is not None:
            return hit, other
    newer = engine.store.get_memory(tenant, memory_id) if memory_id not in given else None
    if newer is None or not window.admits(newer.stated_at) or not newer.life.still_holds(window.as_of):
        return None
    if newer.source_dialog_uuids and set(newer.source_dialog_uuids) <= excluded:
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
    update: dict[str, object] = {
        "current": is_current(memory, topics, as_of),
        "event_dates": memory.life.event_dates,
    }
    if request.options.history:
        update["history"] = history(memory, as_of)
    return hit.model_copy(update=update)
