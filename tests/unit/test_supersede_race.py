"""Two workers of one thread marking replaced facts of the same memory at once: neither mark is lost.

Marking a fact replaced is a read-modify-write of another memory (`supersede`), and adding a
memory's statements to the thread's record is one of that record. The interleaving is forced, not
timed: the store wrapper runs the second writer's whole supersession at the moment the first
writer is about to write, after it has read. On both store backends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from memory_engine.engine import Engine
from memory_engine.models.domain import Memory, MemoryFields
from memory_engine.models.life import MemoryLife
from memory_engine.models.statements import ThreadStatements
from memory_engine.usecases import supersede
from tests.fakes.engine import ENGINE_BACKENDS

TENANT = "acme"
THREAD = "thread-race"
MARCH = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 9, 10, 0, tzinfo=UTC)
JUNE = datetime(2026, 6, 1, 10, 0, tzinfo=UTC)


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        yield engine


class InterleavingStore:
    """The engine's store, running `before_first_update` once, just before the first update."""

    def __init__(self, inner: Any, before_first_update: Callable[[], None]) -> None:
        self._inner = inner
        self._before: Callable[[], None] | None = before_first_update
        self.refused = 0

    def update_memory(self, memory: Memory, *, expected_life: MemoryLife | None = None) -> bool:
        if self._before is not None:
            run, self._before = self._before, None
            run()
        written: bool = self._inner.update_memory(memory, expected_life=expected_life)
        self.refused += not written
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def saved(engine: Engine, memory_id: str, session: str, when: datetime, *facts: str) -> Memory:
    memory = Memory(
        tenant=TENANT,
        memory_id=memory_id,
        session_uuid="",  # no source turns to claim: the race is about the marks alone
        parent_session_uuid=THREAD,
        fields=MemoryFields(summary=" ".join(facts), key_facts=list(facts)),
        source_dialog_uuids=[],
        first_seq=0,
        last_seq=0,
        created_at=when,
        life=MemoryLife(valid_from=when),
    )
    assert engine.store.save_memory(memory)
    return memory


def test_two_writers_marking_facts_of_one_memory_at_once_both_keep_their_marks(engine: Engine) -> None:
    # Given Mina's March memory stating where she lives and what she does
    saved(engine, "m-march", "s1", MARCH, "Mina: I live in Busan.", "Mina: I work as a nurse.")
    # And two later memories, written by two workers at once: she moved; she changed jobs
    moved = saved(engine, "m-may", "s2", MAY, "Mina: I moved to Seoul.")
    new_job = saved(engine, "m-june", "s3", JUNE, "Mina: I work as a teacher now.")
    inner = engine.store

    # When the first worker's supersession has read the March memory and, just before it writes,
    # the second worker's supersession runs whole
    def second_worker() -> None:
        supersede.supersede(replace(engine, store=inner), new_job)

    racing = InterleavingStore(inner, second_worker)
    supersede.supersede(replace(engine, store=racing), moved)

    # Then the first worker's write was refused once (its read was stale) and done again
    assert racing.refused == 1
    # And the March memory keeps both marks: residence replaced in May, job replaced in June
    march = inner.get_memory(TENANT, "m-march")
    assert march is not None
    marks = {(fact.index, fact.slot, fact.superseded_by, fact.invalid_at) for fact in march.life.key_facts}
    assert marks == {(0, "residence", "m-may", MAY), (1, "job", "m-june", JUNE)}


class InterleavingRecordStore:
    """The engine's store, running `before_first_save` once, just before the first statements
    record write."""

    def __init__(self, inner: Any, before_first_save: Callable[[], None]) -> None:
        self._inner = inner
        self._before: Callable[[], None] | None = before_first_save
        self.refused = 0

    def save_statements(self, record: ThreadStatements) -> bool:
        if self._before is not None:
            run, self._before = self._before, None
            run()
        written: bool = self._inner.save_statements(record)
        self.refused += not written
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_two_writers_adding_to_the_statements_record_at_once_mark_in_event_time_order(engine: Engine) -> None:
    # Given March's residence, written by the worker
    supersede.supersede(engine, saved(engine, "m-march", "s1", MARCH, "Mina: I live in Busan."))
    # And two later moves (May, June) written by two workers at once
    may = saved(engine, "m-may", "s2", MAY, "Mina: I moved to Seoul.")
    june = saved(engine, "m-june", "s3", JUNE, "Mina: I moved to Tokyo.")
    inner = engine.store

    # When the May worker has read the thread's record and, just before it writes it, the June
    # worker's supersession runs whole (it sees March only)
    racing = InterleavingRecordStore(inner, lambda: supersede.supersede(replace(engine, store=inner), june))
    supersede.supersede(replace(engine, store=racing), may)

    # Then the May worker's record write was refused once (its read was stale) and done again
    assert racing.refused == 1
    record = inner.get_statements(TENANT, THREAD)
    assert record is not None
    assert [s.memory_id for s in record.statements] == ["m-march", "m-may", "m-june"]
    # And March is replaced by May (the sooner end), May by June, and June holds
    lives = {}
    for memory_id in ("m-march", "m-may", "m-june"):
        stored = inner.get_memory(TENANT, memory_id)
        assert stored is not None
        lives[memory_id] = [(fact.superseded_by, fact.invalid_at) for fact in stored.life.key_facts]
    assert lives == {"m-march": [("m-may", MAY)], "m-may": [("m-june", JUNE)], "m-june": []}
