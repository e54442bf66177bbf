"""A later statement replaces an earlier one: a thread's key facts of one slot and one character.

When the worker writes a memory, its key facts are read for one-value facts (`fact_slots`: where
someone lives, their job, partner, dog, ...), each with its character (the key fact's speaker,
"민수: 서울로 이사했어." → 민수). Within the thread, the statements of one slot and character
in event-time order replace each other: every one but the latest gets `invalid_at` (the next
one's event time) and `superseded_by` (the memory that states it) in its memory's
`life.key_facts`. Nothing is deleted: the replaced key fact stays in its memory as history, and
retrieve puts the replacing memory first (`retrieval.timeline`).

Event time, not arrival order: a session written late (an import, a slow client) whose facts were
stated before the thread's current ones is itself the one replaced.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from memory_engine.engine import Engine
from memory_engine.extraction.fact_slots import slot_of
from memory_engine.models.domain import Memory
from memory_engine.models.life import KeyFactLife

# A thread's memories read per written memory, oldest first: bounded work per batch. A thread
# longer than this compares the new memory with its first MAX_SCANNED memories only.
MAX_SCANNED = 500
_PAGE = 100


@dataclass(frozen=True, order=True)
class Statement:
    """One key fact stating a slot, ordered by event time (then memory id and position)."""

    stated_at: datetime
    memory_id: str
    index: int
    slot: str
    subject: str


def statements(memory: Memory) -> list[Statement]:
    """The memory's key facts that state a one-value fact, with their character."""
    found: list[Statement] = []
    for index, line in enumerate(memory.fields.key_facts):
        subject, separator, text = line.partition(": ")
        if not separator:
            subject, text = "", line
        slot = slot_of(text)
        if slot is not None:
            found.append(Statement(memory.stated_at, memory.memory_id, index, slot, subject.strip()))
    return found


def supersede(engine: Engine, memory: Memory) -> list[Memory]:
    """Record which of the thread's key facts `memory` replaces, and which of its own later
    statements already replace; returns the memories whose life changed (already stored)."""
    new = statements(memory)
    if not new:
        return []
    groups = {(s.slot, s.subject) for s in new}
    thread: dict[str, Memory] = {memory.memory_id: memory}
    by_group: dict[tuple[str, str], list[Statement]] = {group: [] for group in groups}
    for other in _thread_memories(engine, memory):
        for statement in statements(other) if other.memory_id != memory.memory_id else new:
            if (statement.slot, statement.subject) in by_group:
                thread[other.memory_id] = other
                by_group[statement.slot, statement.subject].append(statement)
    if memory.memory_id not in {s.memory_id for group in by_group.values() for s in group}:
        for statement in new:  # not listed yet (a store that lists what it wrote a moment later)
            by_group[statement.slot, statement.subject].append(statement)
    replaced: dict[str, dict[int, KeyFactLife]] = {}
    for group in by_group.values():
        ordered = sorted(group)
        for earlier, later in pairwise(ordered):
            replaced.setdefault(earlier.memory_id, {})[earlier.index] = KeyFactLife(
                index=earlier.index,
                slot=earlier.slot,
                subject=earlier.subject,
                invalid_at=later.stated_at,
                superseded_by=later.memory_id,
            )
    changed: list[Memory] = []
    for memory_id, lives in replaced.items():
        owner = thread[memory_id]
        kept = {fact.index: fact for fact in owner.life.key_facts}
        merged = sorted({**kept, **lives}.values(), key=lambda fact: fact.index)
        if merged == owner.life.key_facts:
            continue
        updated = owner.model_copy(update={"life": owner.life.model_copy(update={"key_facts": merged})})
        if engine.store.update_memory(updated):
            changed.append(updated)
    return changed


def _thread_memories(engine: Engine, memory: Memory) -> Iterator[Memory]:
    after: str | None = None
    seen = 0
    while seen < MAX_SCANNED:
        page = engine.store.list_thread_memories(
            memory.tenant, memory.parent_session_uuid, after, min(_PAGE, MAX_SCANNED - seen)
        )
        if not page:
            return
        yield from page
        seen += len(page)
        after = page[-1].memory_id
