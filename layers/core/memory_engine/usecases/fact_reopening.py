"""Undoing supersession: a statement that stops being stated stops replacing.

A memory's key fact corrected to state something else (`usecases.key_facts`), or the memory
deleted (`usecases.removed_facts`; supersession itself, for a memory deleted while it marked):
each key fact one of its statements had replaced is replaced by the next statement of its slot
and character still there, or holds again when none follows (`reopen`), and each key fact its
extractor named as replaced by it holds again (`unname`). Every write is a compare-and-set on the
owner's life, as supersession's marks are (`usecases.supersede`), and run again changes nothing.

This module imports neither `supersede` nor `removed_facts`: both import it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from functools import partial

from memory_engine.engine import Engine
from memory_engine.models.domain import Memory
from memory_engine.models.life import KeyFactLife
from memory_engine.models.statements import StatementRef, ThreadStatements
from memory_engine.usecases import thread_statements
from memory_engine.usecases.compare_and_set import Lost, compare_and_set, read_again

log = logging.getLogger("memory_engine.worker")


def forget(
    engine: Engine, tenant: str, thread: str, memory_ids: Sequence[str], removed: Sequence[Memory] = ()
) -> list[Memory]:
    """After the memories `memory_ids` of `thread` went (`removed`: those of them read before,
    for what their extractor named): reopen what their statements replaced (`reopen`) and what
    their extractor named (`unname`), then take their statements out of the thread's record.
    Returns the memories changed. What `removed_facts.forget` does, and what supersession does
    for a memory deleted while it marked (`supersede`), without either importing the other."""
    gone = set(memory_ids)
    record = engine.store.get_statements(tenant, thread) if thread and gone else None
    withdrawn = [] if record is None else [s for s in record.statements if s.memory_id in gone]
    named = [memory for memory in removed if memory.metadata.get("replaces_json")]
    if not withdrawn and not named:
        return []
    changed = reopen(engine, tenant, thread, withdrawn, record) if withdrawn else []
    for memory in named:
        changed += unname(engine, memory)
    if withdrawn:
        thread_statements.withdraw(engine, tenant, thread, {(s.memory_id, s.index) for s in withdrawn})
    return changed


def ahead_of_removal(engine: Engine, memory: Memory) -> list[Memory]:
    """What `forget` reopens for `memory`, done while it is still stored: its statements stay in
    the thread's record, passed over here, for `forget` to take out once it went (and to reopen
    again whatever a worker marked by it meanwhile: nothing, run again). Returns the memories
    changed. One read of the record, none for a memory without key facts."""
    tenant, thread = memory.tenant, memory.parent_session_uuid
    record = engine.store.get_statements(tenant, thread) if memory.fields.key_facts else None
    withdrawn = [] if record is None else [s for s in record.statements if s.memory_id == memory.memory_id]
    changed = reopen(engine, tenant, thread, withdrawn, record) if withdrawn else []
    if memory.metadata.get("replaces_json"):
        changed += unname(engine, memory)
    return changed


def named(memory: Memory) -> dict[str, dict[int, KeyFactLife]]:
    """The key facts the extractor said the memory's replace (`replaces_json`), by memory id and
    index, each as the mark it gets: `invalid_at` this memory's event time, `superseded_by` it."""
    encoded = memory.metadata.get("replaces_json")
    if not isinstance(encoded, str) or not encoded:
        return {}
    decoded = json.loads(encoded)
    targets: dict[str, dict[int, KeyFactLife]] = {}
    if not isinstance(decoded, dict):
        return {}
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
    return targets


def reopen(
    engine: Engine,
    tenant: str,
    thread: str,
    withdrawn: Sequence[StatementRef],
    record: ThreadStatements | None = None,
) -> list[Memory]:
    """After statements stopped being stated (their key facts corrected to state something else,
    or their memory deleted): each key fact one of them had replaced is replaced by the next
    statement of its slot and character that still stands instead, or holds again when none
    follows. Returns the memories changed (stored).

    `record` is the thread's record as read (None: read it here); the withdrawn statements may
    still be in it and are passed over, as is a statement whose memory is gone or no longer
    states it. Reads the memories just before each withdrawn statement in event time (those it
    was paired with, `thread_statements.Neighbours`: a run of one memory's statements) and, for a
    key fact it had replaced, the ones after it up to the first that stands. Run again, it
    changes nothing more."""
    if record is None and withdrawn:
        record = engine.store.get_statements(tenant, thread)
    if record is None:
        return []
    out = {(s.memory_id, s.index) for s in withdrawn}
    standing = _Standing(engine, tenant, thread)
    changed: list[Memory] = []
    for gone in withdrawn:
        group = [s for s in record.statements if s.group == gone.group and (s.memory_id, s.index) not in out]
        run: list[StatementRef] = []
        for earlier in reversed([s for s in group if s.order < gone.order]):
            if earlier.memory_id == gone.memory_id or not standing.holds(earlier):
                continue
            if run and earlier.memory_id != run[0].memory_id:
                break
            run.append(earlier)
        for earlier in run:
            after = [s for s in group if s.order > earlier.order and s.memory_id != earlier.memory_id]
            updated = _reopened(
                engine,
                standing.read.get(earlier.memory_id),
                earlier.index,
                gone.memory_id,
                partial(standing.first, after),
                earlier.group,
            )
            if updated is not None:
                standing.read[updated.memory_id] = updated
                changed.append(updated)
    return changed


def unname(engine: Engine, removed: Memory) -> list[Memory]:
    """After `removed` was deleted: each key fact the extractor said it replaced (`replaces_json`)
    and still marked replaced by it holds again (no slot chain orders what a model named).
    Returns the memories changed (stored); run again, it changes nothing more."""
    changed: list[Memory] = []
    for owner_id, lives in named(removed).items():
        owner = engine.store.get_memory(removed.tenant, owner_id)
        for index in sorted(lives):
            if owner is None or owner.parent_session_uuid != removed.parent_session_uuid:
                break
            updated = _reopened(engine, owner, index, removed.memory_id, lambda: None)
            if updated is not None:
                owner = updated
                changed = [m for m in changed if m.memory_id != owner_id] + [updated]
    return changed


class _Standing:
    """Whether a recorded statement still stands (its memory stored in the thread, its key fact
    still stating it), each memory read once; `read` keeps them for a first compare-and-set."""

    def __init__(self, engine: Engine, tenant: str, thread: str) -> None:
        self._engine, self._tenant, self._thread = engine, tenant, thread
        self.read: dict[str, Memory | None] = {}

    def first(self, ordered: list[StatementRef]) -> StatementRef | None:
        """The first of `ordered` that still stands."""
        return next((statement for statement in ordered if self.holds(statement)), None)

    def holds(self, statement: StatementRef) -> bool:
        if statement.memory_id not in self.read:
            self.read[statement.memory_id] = self._engine.store.get_memory(self._tenant, statement.memory_id)
        owner = self.read[statement.memory_id]
        if owner is None or owner.parent_session_uuid != self._thread:
            return False
        return any(
            (s.index, s.slot, s.subject) == (statement.index, statement.slot, statement.subject)
            for s in thread_statements.statements(owner)
        )


def _reopened(
    engine: Engine,
    owner: Memory | None,
    index: int,
    replacer: str,
    later: Callable[[], StatementRef | None],
    group: tuple[str, str] = ("", ""),
) -> Memory | None:
    """`owner` (as read) with the mark of its key fact `index` by `replacer` moved to the statement
    `later()` gives, of `group` (slot, character), or taken off (None: the fact holds again),
    stored with a compare-and-set on its life like supersession's marks; None when it was not marked so.
    `later` is asked once, and only for a mark that moves."""
    if owner is None:
        return None
    following: list[StatementRef | None] = []

    def attempt(owner: Memory) -> Memory | Lost[Memory] | None:
        marks = owner.life.key_facts
        mark = next((fact for fact in marks if fact.index == index), None)
        if mark is None or mark.superseded_by != replacer:
            return None
        if not following:
            following.append(later())
        kept = [fact for fact in marks if fact.index != index]
        if (next_one := following[0]) is not None:
            kept.append(
                KeyFactLife(
                    index=index,
                    slot=group[0],
                    subject=group[1],
                    invalid_at=next_one.stated_at,
                    superseded_by=next_one.memory_id,
                )
            )
        life = owner.life.model_copy(update={"key_facts": sorted(kept, key=lambda fact: fact.index)})
        updated = owner.model_copy(update={"life": life})
        if engine.store.update_memory(updated, expected_life=owner.life):
            return updated
        return read_again(engine, owner, gone=None)  # deleted meanwhile: nothing left to reopen

    def gave_up(owner: Memory) -> None:
        log.warning(
            "memory %s kept changing while a replaced fact was reopened; left as it is", owner.memory_id
        )

    return compare_and_set(owner, attempt, gave_up=gave_up)
