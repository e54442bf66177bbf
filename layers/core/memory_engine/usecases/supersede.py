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

A statement that stops being stated (its key fact corrected, `usecases.key_facts`; its memory
deleted, `usecases.removed_facts`) stops replacing: what it had replaced is replaced by the next
statement of its slot and character still there, or holds again (`usecases.fact_reopening`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_engine.engine import Engine
from memory_engine.models.domain import Memory
from memory_engine.models.life import KeyFactLife
from memory_engine.models.statements import StatementRef
from memory_engine.ports import CurrentFact
from memory_engine.usecases import fact_reopening, thread_statements
from memory_engine.usecases.compare_and_set import Lost, compare_and_set, read_again
from memory_engine.usecases.fact_reopening import named

log = logging.getLogger("memory_engine.worker")


@dataclass(frozen=True, order=True)
class Statement:
    """One key fact stating a slot, ordered by event time (then memory id and position)."""

    stated_at: datetime
    memory_id: str
    index: int
    slot: str
    subject: str


def statements(memory: Memory) -> list[Statement]:
    """The memory's key facts that state a one-value fact, with their character (read as
    `thread_statements.statements` reads them)."""
    return [
        Statement(found.stated_at, found.memory_id, found.index, found.slot, found.subject)
        for found in thread_statements.statements(memory)
    ]


def current_facts(engine: Engine, tenant: str, thread: str, limit: int) -> list[CurrentFact]:
    """The key facts that still hold in the thread's `limit` newest memories, the newest `limit`
    of them, oldest first: one bounded read, whatever the thread's length."""
    if limit <= 0:
        return []  # an extractor that reads none: no read
    found: list[tuple[datetime, str, CurrentFact]] = []
    for memory in engine.store.latest_thread_memories(tenant, thread, limit):
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
    statements already replace; returns the memories whose life changed (already stored).

    Reads the thread's statements record (one record, `thread_statements`) and only the memories
    next to the new statements in event time: bounded work, however long the thread."""
    changed = _marked(engine, memory)
    memory = next((m for m in changed if m.memory_id == memory.memory_id), memory)
    changed = _replaced(engine, [memory], changed)
    return _unless_deleted_meanwhile(engine, memory, changed)


def _unless_deleted_meanwhile(engine: Engine, memory: Memory, changed: list[Memory]) -> list[Memory]:
    """`changed`, unless `memory` was deleted while it was marking: a delete that removed it
    before its statements were recorded found nothing to reopen, so what it just marked is
    reopened here (`fact_reopening.forget`), the record read after the marks. Either the delete
    finds its statements recorded, or this finds it gone: no mark is left naming a memory that
    is not there. One read, for a memory that states or names something replaced."""
    if not (memory.metadata.get("replaces_json") or thread_statements.statements(memory)):
        return changed
    if engine.store.get_memory(memory.tenant, memory.memory_id) is not None:
        return changed
    reopened = fact_reopening.forget(
        engine, memory.tenant, memory.parent_session_uuid, [memory.memory_id], [memory]
    )
    latest = {m.memory_id: m for m in [*changed, *reopened] if m.memory_id != memory.memory_id}
    return list(latest.values())


def supersede_copies(engine: Engine, memories: Sequence[Memory]) -> None:
    """The same for memories written without an extraction (a fork's copies, an import's): their
    statements join their thread's record, and replace and are replaced as the worker's would."""
    threads: dict[tuple[str, str], list[Memory]] = {}
    for memory in memories:
        threads.setdefault((memory.tenant, memory.parent_session_uuid), []).append(memory)
    for written in threads.values():
        _replaced(engine, written, [])


def _replaced(engine: Engine, written: list[Memory], changed: list[Memory]) -> list[Memory]:
    """Mark what the statements of `written` (memories of one thread) replace and what replaces
    them, adding them to the thread's record first; `changed` plus the memories marked."""
    new = [statement for memory in written for statement in thread_statements.statements(memory)]
    if not new:
        return changed
    record = thread_statements.add(engine, written[0].tenant, written[0].parent_session_uuid, new)
    groups: dict[tuple[str, str], dict[tuple[str, int], StatementRef]] = {s.group: {} for s in new}
    for statement in [*record.statements, *new]:
        if statement.group in groups:
            groups[statement.group][statement.memory_id, statement.index] = statement
    reader = thread_statements.Neighbours(engine, written)
    replaced: dict[str, dict[int, KeyFactLife]] = {}
    for group in groups.values():
        for earlier, later in reader.pairs(sorted(group.values(), key=lambda s: s.order)):
            replaced.setdefault(earlier.memory_id, {})[earlier.index] = KeyFactLife(
                index=earlier.index,
                slot=earlier.slot,
                subject=earlier.subject,
                invalid_at=later.stated_at,
                superseded_by=later.memory_id,
            )
    thread_statements.prune(engine, record, reader.gone)
    ours = {memory.memory_id for memory in written}
    for memory_id, lives in replaced.items():
        # A written memory is read as stored: the store may have set what its writer did not
        # (a retention's expiry), and the marking writes the whole memory back.
        owner = (
            engine.store.get_memory(written[0].tenant, memory_id)
            if memory_id in ours
            else reader.read[memory_id]
        )
        if owner is None:
            continue
        updated = _mark(engine, owner, lives, _earlier_end)
        if updated is not None:
            changed = [m for m in changed if m.memory_id != updated.memory_id] + [updated]
    # A statement whose memory went without its removal reopening what it replaced (a removal cut
    # short): that fact moves to the next statement still there, a new one included, or holds.
    deleted = [
        s
        for s in record.statements
        if (s.memory_id, s.index) in reader.gone and reader.read[s.memory_id] is None
    ]
    if deleted:
        for reopened in fact_reopening.reopen(engine, record.tenant, record.thread, deleted, record):
            changed = [m for m in changed if m.memory_id != reopened.memory_id] + [reopened]
    return changed


def _marked(engine: Engine, memory: Memory) -> list[Memory]:
    """Apply what the extractor said the memory's key facts replace (`replaces_json`): each named
    current fact, of an earlier memory of the thread, gets `invalid_at` (this memory's event
    time) and `superseded_by`. A name that is not a key fact of the thread is ignored."""
    changed: list[Memory] = []
    for owner_id, lives in named(memory).items():
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
    it was read, it is read again and merged again (`compare_and_set`), so two writers marking
    facts of one memory at once both keep their marks."""

    def attempt(owner: Memory) -> Memory | Lost[Memory] | None:
        kept = {fact.index: fact for fact in owner.life.key_facts}
        for index, life in lives.items():
            kept[index] = merge(kept[index], life) if index in kept else life
        merged = sorted(kept.values(), key=lambda fact: fact.index)
        if merged == owner.life.key_facts:
            return None
        updated = owner.model_copy(update={"life": owner.life.model_copy(update={"key_facts": merged})})
        if engine.store.update_memory(updated, expected_life=owner.life):
            return updated
        return read_again(engine, owner, gone=None)  # deleted meanwhile: nothing left to mark

    def gave_up(owner: Memory) -> None:
        # Never seen outside a test: the memory stays as it is (its facts read as current) rather
        # than failing a job whose memory is written already, and a later statement marks it again.
        log.warning(
            "memory %s kept changing while its replaced facts were marked; left unmarked", owner.memory_id
        )

    return compare_and_set(owner, attempt, gave_up=gave_up)
