"""Issue #45, "nothing half-written stays": a delete whose process dies half-way is finished by
its retry (`usecases/delete_intents.py`), or, when none comes, by the sweep
(`usecases/unfinished_deletes.py`). The memory bank's
delete reopens what its memory replaced before the removal, as a dialog delete does; every delete
is recorded before its first change and the record removed after its last. Both store backends,
the built-in extractor, English and Korean where it reads the turns."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from memory_engine.engine import Engine
from memory_engine.errors import NotFound, Unavailable
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import DeleteRequest
from memory_engine.ports import RemovalOutcome
from memory_engine.usecases import bank, delete, sweep, unfinished_deletes
from tests.fakes.ports import SetClock
from tests.unit.test_bank_fact_reopen import TENANT as BANK_TENANT
from tests.unit.test_bank_fact_reopen import holds, replaced
from tests.unit.test_removed_facts import DAY, MOVES, marks, recorded, say
from tests.unit.test_thread_fact_life import MARCH, TENANT

# Past the age at which the sweep takes a delete's process for dead.
LATER = unfinished_deletes.STALE_AFTER.total_seconds() + 60


@pytest.fixture(autouse=True)
def builtin(engine: Engine) -> None:
    """The conftest's engine on each backend, under its clock, with the built-in extractor."""
    engine.extractor = BuiltinExtractor()


def begun(engine: Engine) -> list[tuple[str, str, str, str]]:
    """The deletes recorded and not ended, of every tenant, whenever begun."""
    far = engine.clock.now() + timedelta(days=1)
    return [intent.key for intent in engine.store.deletes_begun(far, 100)]


def dies_after(removal: Callable[..., RemovalOutcome]) -> Callable[..., RemovalOutcome]:
    def removes_then_dies(*arguments: str) -> RemovalOutcome:
        removal(*arguments)
        raise ConnectionError("the handler died after the store's removal")

    return removes_then_dies


def dies_before(*arguments: str) -> RemovalOutcome:
    raise ConnectionError("the handler died before the store's removal")


@MOVES
def test_a_bank_delete_that_died_right_after_its_removal_leaves_the_replaced_fact_holding(
    engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch, before: str, after: str
) -> None:
    # Given Seoul replaced by Busan, and a bank delete of the Busan memory that dies right after
    # the store removed it
    seoul = say(engine, "s1", before, MARCH)
    busan = say(engine, "s2", after, MARCH + DAY)
    assert marks(engine, seoul) == [(busan.memory_id, busan.stated_at)]
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", dies_after(engine.store.delete_memory))
        with pytest.raises(ConnectionError):
            bank.delete(engine, TENANT, busan.memory_id)
    assert engine.store.get_memory(TENANT, busan.memory_id) is None

    # When the caller retries it (the memory is gone: 404)
    with pytest.raises(NotFound):
        bank.delete(engine, TENANT, busan.memory_id)

    # Then the Seoul fact holds: it was reopened before the removal
    assert marks(engine, seoul) == []

    # And when the sweep runs minutes later, it takes Busan out of the record and ends the delete
    assert recorded(engine) == {seoul.memory_id, busan.memory_id}
    clock.advance(LATER)
    sweep.run(engine)
    assert recorded(engine) == {seoul.memory_id}
    assert marks(engine, seoul) == []
    assert begun(engine) == []


def test_a_bank_fact_delete_that_died_right_after_its_removal_leaves_the_retired_fact_holding(
    engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a nurse fact a merge retired as replaced by the editor fact, and a delete of the editor
    # fact that dies right after the store removed it
    retired, successor = replaced(engine)
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", dies_after(engine.store.delete_memory))
        with pytest.raises(ConnectionError):
            bank.delete(engine, BANK_TENANT, successor)

    # When the caller retries it (404), and the sweep runs minutes later
    with pytest.raises(NotFound):
        bank.delete(engine, BANK_TENANT, successor)
    assert holds(engine, retired)
    clock.advance(LATER)
    sweep.run(engine)

    # Then the nurse fact holds, and nothing is left begun
    assert holds(engine, retired)
    assert begun(engine) == []


def test_a_bank_delete_that_died_before_its_removal_is_finished_by_its_retry(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given Seoul replaced by Busan, and a bank delete of Busan that reopened Seoul and died
    # before the store's removal
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", dies_before)
        with pytest.raises(ConnectionError):
            bank.delete(engine, TENANT, busan.memory_id)
    assert marks(engine, seoul) == []
    assert len(begun(engine)) == 1

    # When the caller retries it
    bank.delete(engine, TENANT, busan.memory_id)

    # Then the memory is gone, Seoul holds, the record lists Seoul alone, and nothing is left begun
    assert engine.store.get_memory(TENANT, busan.memory_id) is None
    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}
    assert begun(engine) == []


@MOVES
def test_a_dialog_delete_that_died_after_reopening_and_is_never_retried_is_finished_by_the_sweep(
    engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch, before: str, after: str
) -> None:
    # Given Seoul replaced by Busan, and a dialog delete of Busan's only turn that reopened Seoul
    # and died before the store's removal: both facts read as current
    seoul = say(engine, "s1", before, MARCH)
    busan = say(engine, "s2", after, MARCH + DAY)
    request = DeleteRequest(session_uuid="s2", dialog_uuid="s2-d1")
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_dialog", dies_before)
        with pytest.raises(ConnectionError):
            delete.run(engine, TENANT, request)
    assert marks(engine, seoul) == [] and marks(engine, busan) == []

    # When no retry comes, and the sweep runs minutes later
    clock.advance(LATER)
    sweep.run(engine)

    # Then the delete is finished: the Busan memory, its turn and session gone, Seoul current
    assert engine.store.get_memory(TENANT, busan.memory_id) is None
    assert engine.store.get_turn(TENANT, "s2", "s2-d1") is None
    assert engine.store.get_session(TENANT, "s2") is None
    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}
    assert begun(engine) == []


def test_a_dialog_delete_that_died_after_its_removal_is_finished_by_the_sweep_from_its_record(
    engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given Seoul replaced by Busan, and a dialog delete of Busan's only turn that died right after
    # the store removed the turn, its memory and the emptied session (the record still lists Busan)
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    request = DeleteRequest(session_uuid="s2", dialog_uuid="s2-d1")
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_dialog", dies_after(engine.store.delete_dialog))
        with pytest.raises(ConnectionError):
            delete.run(engine, TENANT, request)
    assert recorded(engine) == {seoul.memory_id, busan.memory_id}

    # When the sweep runs minutes later (its rerun of the delete is a 404: the turn went)
    clock.advance(LATER)
    sweep.run(engine)

    # Then the record's Busan statement is taken out, Seoul holds, and nothing is left begun
    assert recorded(engine) == {seoul.memory_id}
    assert marks(engine, seoul) == []
    assert begun(engine) == []


def test_the_sweep_leaves_a_delete_begun_a_moment_ago_to_its_process(
    engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a dialog delete begun a moment ago and not ended (its process may still be running)
    say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_dialog", dies_before)
        with pytest.raises(ConnectionError):
            delete.run(engine, TENANT, DeleteRequest(session_uuid="s2", dialog_uuid="s2-d1"))

    # When the sweep runs a minute later
    clock.advance(60)
    sweep.run(engine)

    # Then it leaves the delete alone
    assert engine.store.get_memory(TENANT, busan.memory_id) is not None
    assert begun(engine) == [(TENANT, "engine", "s2", "s2-d1")]


def test_deletes_that_end_leave_nothing_begun(engine: Engine) -> None:
    # Given memories deleted every way: by id, with their turn, through the bank, and a buffered turn
    first = say(engine, "s1", "I live in Seoul.", MARCH)
    second = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    third = say(engine, "s3", "I moved to Daegu.", MARCH + 2 * DAY)

    # When each is deleted (and an unknown turn, a 404)
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid=first.memory_id))
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s2", dialog_uuid="s2-d1"))
    bank.delete(engine, TENANT, third.memory_id)
    with pytest.raises(NotFound):
        delete.run(engine, TENANT, DeleteRequest(session_uuid="s3", dialog_uuid="no-such-turn"))

    # Then no delete is left begun
    assert begun(engine) == []
    assert engine.store.get_memory(TENANT, second.memory_id) is None


def test_the_sweep_finishes_a_bounded_number_of_deletes_oldest_first_and_keeps_those_it_could_not(
    engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given three bank deletes that died before their removal, a minute apart
    memories = [say(engine, f"s{n}", "I have a dog named Bori.", MARCH + n * DAY) for n in range(3)]
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", dies_before)
        for memory in memories:
            with pytest.raises(ConnectionError):
                bank.delete(engine, TENANT, memory.memory_id)
            clock.advance(60)
    clock.advance(LATER)

    # When a sweep may finish two, and the first of them fails this time
    removal = engine.store.delete_memory

    def unavailable_for_the_first(tenant: str, memory_id: str) -> RemovalOutcome:
        if memory_id == memories[0].memory_id:
            raise Unavailable("the table is throttling")
        return removal(tenant, memory_id)

    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", unavailable_for_the_first)
        finished = unfinished_deletes.finish_begun(engine, limit=2)

    # Then the second is finished, the first stays for the next sweep (begun anew by its rerun: it
    # goes behind the third), and the third was not read
    assert [intent.target for intent in finished] == [memories[1].memory_id]
    stored = engine.store.get_memories(TENANT, [m.memory_id for m in memories], vectors=False)
    assert sorted(stored) == [memories[0].memory_id, memories[2].memory_id]
    assert [key[3] for key in begun(engine)] == [memories[2].memory_id, memories[0].memory_id]
