"""What each use case does when its compare-and-set loses every round (`usecases.compare_and_set`):
the worker's writes give up without failing the job, leaving things as they are with a warning
(supersession's marks and the thread's statements record, their undoing); reopening a merge's
retired facts gives up silently. Forced with a store that refuses every conditional write, not
timed; on both store backends. A merge's own writes answer a Conflict (test_fact_merge_race)."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from memory_engine.engine import Engine
from memory_engine.models.domain import FACT_KIND, Memory, MemoryFields
from memory_engine.models.life import MemoryLife
from memory_engine.models.statements import ThreadStatements
from memory_engine.usecases import fact_reopening, facts, supersede
from memory_engine.usecases.compare_and_set import MAX_ATTEMPTS
from tests.contract.builders import make_memory

TENANT = "acme"
THREAD = "thread-kept-changing"
MARCH = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 9, 10, 0, tzinfo=UTC)


class RefusingStore:
    """The engine's store, refusing every compare-and-set write as if another writer always got
    there first; counts them."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.refused_updates = 0
        self.refused_records = 0

    def update_memory(self, memory: Memory, *, expected_life: MemoryLife | None = None) -> bool:
        self.refused_updates += 1
        return False

    def save_statements(self, record: ThreadStatements) -> bool:
        self.refused_records += 1
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def saved(engine: Engine, memory_id: str, when: datetime, fact: str, **metadata: str) -> Memory:
    memory = make_memory(
        tenant=TENANT,
        memory_id=memory_id,
        session_uuid="",  # no source turns: what is raced is the life and the record alone
        parent=THREAD,
        fields=MemoryFields(summary=fact, key_facts=[fact]),
        created_at=when,
        metadata=dict(metadata),
        life=MemoryLife(valid_from=when),
    )
    assert engine.store.save_memory(memory)
    return memory


def test_supersession_that_keeps_losing_leaves_the_earlier_fact_current_and_warns(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    # Given Mina's March statement, recorded, and her May move
    supersede.supersede(engine, saved(engine, "m-march", MARCH, "Mina: I live in Busan."))
    moved = saved(engine, "m-may", MAY, "Mina: I moved to Seoul.")
    refusing = RefusingStore(engine.store)

    # When the May memory's supersession loses every write
    with caplog.at_level(logging.WARNING, "memory_engine.worker"):
        changed = supersede.supersede(replace(engine, store=refusing), moved)

    # Then the job goes on: nothing changed, each write tried MAX_ATTEMPTS times, both logged
    assert changed == []
    assert (refusing.refused_records, refusing.refused_updates) == (MAX_ATTEMPTS, MAX_ATTEMPTS)
    march = engine.store.get_memory(TENANT, "m-march")
    assert march is not None and march.life.key_facts == []
    warned = [record.getMessage() for record in caplog.records]
    assert any("1 statements left out" in message for message in warned)
    assert any("m-march kept changing" in message and "left unmarked" in message for message in warned)


def test_an_undoing_that_keeps_losing_leaves_the_mark_and_the_record_and_warns(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    # Given Mina's March statement replaced by her May move
    supersede.supersede(engine, saved(engine, "m-march", MARCH, "Mina: I live in Busan."))
    supersede.supersede(engine, saved(engine, "m-may", MAY, "Mina: I moved to Seoul."))
    refusing = RefusingStore(engine.store)

    # When forgetting the May memory loses every write
    with caplog.at_level(logging.WARNING, "memory_engine.worker"):
        changed = fact_reopening.forget(replace(engine, store=refusing), TENANT, THREAD, ["m-may"])

    # Then nothing changed, each write tried MAX_ATTEMPTS times, both logged
    assert changed == []
    assert (refusing.refused_updates, refusing.refused_records) == (MAX_ATTEMPTS, MAX_ATTEMPTS)
    march = engine.store.get_memory(TENANT, "m-march")
    assert march is not None and [mark.superseded_by for mark in march.life.key_facts] == ["m-may"]
    record = engine.store.get_statements(TENANT, THREAD)
    assert record is not None and {s.memory_id for s in record.statements} == {"m-march", "m-may"}
    warned = [record.getMessage() for record in caplog.records]
    assert any("m-march kept changing" in message and "left as it is" in message for message in warned)
    assert any("1 statements left in" in message for message in warned)


def test_reopening_a_retired_fact_that_keeps_losing_leaves_it_retired_without_an_error(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a fact a merge retired as replaced by another, which names it
    old = saved(engine, "f-old", MARCH, "Mina lives in Busan.", kind=FACT_KIND)
    assert engine.store.update_memory(
        facts.retired(old, MAY, "contradiction", "f-new"), expected_life=old.life
    )
    new = saved(
        engine, "f-new", MAY, "Mina lives in Seoul.", kind=FACT_KIND, **{facts.REPLACES_FACTS: '["f-old"]'}
    )
    refusing = RefusingStore(engine.store)

    # When the replacing fact is deleted and reopening the old one loses every write
    with caplog.at_level(logging.WARNING):
        reopened = facts.reopen_replaced(replace(engine, store=refusing), [new])

    # Then it gives up after MAX_ATTEMPTS writes, silently: the old fact stays retired
    assert reopened == []
    assert refusing.refused_updates == MAX_ATTEMPTS
    kept = engine.store.get_memory(TENANT, "f-old")
    assert kept is not None and kept.life.superseded_by == "f-new"
    assert caplog.records == []
