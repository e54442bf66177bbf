"""A later statement replaces an earlier one: a thread's key facts of one slot and one character.

When the worker writes a memory, its key facts are read for one-value facts (`fact_slots`: where
someone lives, their job, partner, dog, ...), each with its character (the key fact's speaker,
"민수: 서울로 이사했어." → 민수). Within the thread, the statements of one slot and character
in event-time order replace each other: every one but the latest gets `invalid_at` (the next
one's event time) and `superseded_by` (the memory that states it) in its memory's
`life.key_facts`. Nothing is deleted: the replaced key fact stays in its memory as history, and
retrieve puts the replacing memory first (`retrieval.timeline`).

A key fact written in the third person, as an LLM writes it ("Mina moved to Seoul."), is read as
the statement of the character it opens with (`extraction.fact_subjects`), so it pairs with the
built-in extractor's "Mina: I live in Busan." and with a buffered turn of Mina's.

Event time, not arrival order: a session written late (an import, a slow client) whose facts were
stated before the thread's current ones is itself the one replaced.

An extractor that reads the thread's current facts (`ports.ReadsCurrentFacts`, the LLM one) is
shown them (`current_facts`) and names the ones its key facts update or contradict
(`replaces_json` in the memory's metadata): those are marked replaced too, whatever the slots say.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from memory_engine.engine import Engine
from memory_engine.extraction.fact_subjects import stated
from memory_engine.models.domain import Memory
from memory_engine.models.life import KeyFactLife
from memory_engine.ports import CurrentFact

log = logging.getLogger("memory_engine.worker")

# A thread's memories read per written memory, oldest first: bounded work per batch. A thread
# longer than this compares the new memory with its first MAX_SCANNED memories only.
MAX_SCANNED = 500
_PAGE = 100
# Compare-and-set rounds of marking one memory: each lost round means another worker of the
# thread marked it meanwhile, so a handful covers any real contention.
MAX_MARK_ATTEMPTS = 8


@dataclass(frozen=True, order=True)
class Statement:
    """One key fact stating a slot, ordered by event time (then memory id and position)."""

    stated_at: datetime
    memory_id: str
    index: int
    slot: str
    subject: str


def statements(memory: Memory) -> list[Statement]:
    """The memory's key facts that state a one-value fact, with their character: a speaker's line
    ("Mina: I moved to Seoul.") or a fact about one of the memory's characters ("Mina moved to
    Seoul.", as an LLM writes it; `extraction.fact_subjects`)."""
    found: list[Statement] = []
    for index, line in enumerate(memory.fields.key_facts):
        read = stated(line, memory.fields.characters)
        if read is not None:
            found.append(Statement(memory.stated_at, memory.memory_id, index, *read))
    return found


def current_facts(engine: Engine, tenant: str, thread: str, limit: int) -> list[CurrentFact]:
    """The thread's newest `limit` key facts that still hold, oldest first (bounded scan)."""
    if limit <= 0:
        return []  # an extractor that reads none: no scan
    found: list[tuple[datetime, str, CurrentFact]] = []
    for memory in _thread_memories(engine, tenant, thread):
        replaced = {fact.index for fact in memory.life.key_facts}
        found.extend(
            (
                memory.stated_at,
                f"{memory.memory_id}#{index}",
                CurrentFact(id=f"{memory.memory_id}#{index}", fact=text, stated_at=memory.stated_at),
            )
            for index, text in enumerate(memory.fields.key_facts)
            if index not in replaced
        )
    found.sort(key=lambda item: (item[0], item[1]))
    return [fact for _, _, fact in found[-limit:]]


def supersede(engine: Engine, memory: Memory) -> list[Memory]:
    """Record which of the thread's key facts `memory` replaces, and which of its own later
    statements already replace; returns the memories whose life changed (already stored)."""
    changed = _marked(engine, memory)
    memory = next((m for m in changed if m.memory_id == memory.memory_id), memory)
    new = statements(memory)
    if not new:
        return changed
    groups = {(s.slot, s.subject) for s in new}
    thread: dict[str, Memory] = {memory.memory_id: memory}
    by_group: dict[tuple[str, str], list[Statement]] = {group: [] for group in groups}
    for other in _thread_memories(engine, memory.tenant, memory.parent_session_uuid):
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
        for position, earlier in enumerate(ordered):
            # The next statement of another memory: a memory stating both values holds the later
            # one itself, and marking its own fact would make it read as replaced by itself.
            later = next((s for s in ordered[position + 1 :] if s.memory_id != earlier.memory_id), None)
            if later is None:
                continue
            replaced.setdefault(earlier.memory_id, {})[earlier.index] = KeyFactLife(
                index=earlier.index,
                slot=earlier.slot,
                subject=earlier.subject,
                invalid_at=later.stated_at,
                superseded_by=later.memory_id,
            )
    for memory_id, lives in replaced.items():
        updated = _mark(engine, thread[memory_id], lives, _earlier_end)
        if updated is not None:
            changed = [m for m in changed if m.memory_id != updated.memory_id] + [updated]
    return changed


def _marked(engine: Engine, memory: Memory) -> list[Memory]:
    """Apply what the extractor said the memory's key facts replace (`replaces_json`): each named
    current fact, of an earlier memory of the thread, gets `invalid_at` (this memory's event
    time) and `superseded_by`. A name that is not a key fact of the thread is ignored."""
    encoded = memory.metadata.get("replaces_json")
    if not isinstance(encoded, str) or not encoded:
        return []
    decoded = json.loads(encoded)
    targets: dict[str, dict[int, KeyFactLife]] = {}
    if not isinstance(decoded, dict):
        return []
    for value in decoded.values():
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
            continue
        named, _, position = value[0].rpartition("#")
        reason = "contradiction" if value[1] == "contradiction" else "update"
        if named and named != memory.memory_id and position.isdigit():
            targets.setdefault(named, {})[int(position)] = KeyFactLife(
                index=int(position),
                slot="",  # named by the extractor, not read from a slot: any question's
                invalid_at=memory.stated_at,
                superseded_by=memory.memory_id,
                reason=reason,
            )
    changed: list[Memory] = []
    for owner_id, lives in targets.items():
        owner = engine.store.get_memory(memory.tenant, owner_id)
        if owner is None or owner.parent_session_uuid != memory.parent_session_uuid:
            continue
        valid = {index: life for index, life in lives.items() if index < len(owner.fields.key_facts)}
        updated = _mark(engine, owner, valid, _first_kept)
        if updated is not None:
            changed.append(updated)
    return changed


def _earlier_end(kept: KeyFactLife, new: KeyFactLife) -> KeyFactLife:
    """Two marks of one key fact: the one ending it sooner. A key fact ends at the next statement
    of its slot, and a writer that saw more of the thread finds an earlier one (or the same), so
    the merge is the same in any order two writers reach it."""
    return new if new.invalid_at <= kept.invalid_at else kept


def _first_kept(kept: KeyFactLife, new: KeyFactLife) -> KeyFactLife:
    """What the extractor names is added to a key fact not marked yet, never over a mark."""
    return kept


def _mark(
    engine: Engine,
    owner: Memory,
    lives: Mapping[int, KeyFactLife],
    merge: Callable[[KeyFactLife, KeyFactLife], KeyFactLife],
) -> Memory | None:
    """Merge `lives` into the owner's replaced key facts and store it; the stored memory if it
    changed. A compare-and-set on its life: when another worker of the thread marked it since
    it was read, it is read again and merged again (at most MAX_MARK_ATTEMPTS times), so two
    writers marking facts of one memory at once both keep their marks."""
    for _ in range(MAX_MARK_ATTEMPTS):
        kept = {fact.index: fact for fact in owner.life.key_facts}
        for index, life in lives.items():
            kept[index] = merge(kept[index], life) if index in kept else life
        merged = sorted(kept.values(), key=lambda fact: fact.index)
        if merged == owner.life.key_facts:
            return None
        updated = owner.model_copy(update={"life": owner.life.model_copy(update={"key_facts": merged})})
        if engine.store.update_memory(updated, expected_life=owner.life):
            return updated
        fresh = engine.store.get_memory(owner.tenant, owner.memory_id)
        if fresh is None:
            return None  # deleted meanwhile: nothing left to mark
        owner = fresh
    # Never seen outside a test: the memory stays as it is (its facts read as current) rather
    # than failing a job whose memory is written already, and a later statement marks it again.
    log.warning(
        "memory %s kept changing while its replaced facts were marked; left unmarked", owner.memory_id
    )
    return None


def _thread_memories(engine: Engine, tenant: str, thread: str) -> Iterator[Memory]:
    after: str | None = None
    seen = 0
    while seen < MAX_SCANNED:
        page = engine.store.list_thread_memories(tenant, thread, after, min(_PAGE, MAX_SCANNED - seen))
        if not page:
            return
        yield from page
        seen += len(page)
        after = page[-1].memory_id
