"""Issue #45: a deleted memory no longer replaces anything. Whichever way it goes — by id, through
the memory bank's route, with the turn it was made of (its session with it), or expired and
removed by the sweep — its statements leave the thread's record and a fact it had replaced holds
again, or is replaced by the next statement of its slot still there. A retried delete finishes
the work. Both store backends, the built-in extractor, English and Korean."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from memory_engine.engine import Engine
from memory_engine.errors import NotFound
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import ConsolidateRequest, DeleteRequest
from memory_engine.models.domain import Memory
from memory_engine.usecases import bank, consolidate, delete, sweep
from tests.fakes.engine import run_worker
from tests.fakes.ports import SetClock
from tests.unit.test_thread_fact_life import MARCH, TENANT, THREAD, stored

DAY = timedelta(days=1)
# A home, then a move: English and Korean.
MOVES = pytest.mark.parametrize(
    ("before", "after"),
    [("I live in Seoul.", "I moved to Busan."), ("나는 부산에 살아.", "지난주에 서울로 이사했어.")],
    ids=["en", "ko"],
)


@pytest.fixture(autouse=True)
def builtin(engine: Engine) -> None:
    """The conftest's engine on each backend, under its clock, with the built-in extractor."""
    engine.extractor = BuiltinExtractor()


def say(engine: Engine, session: str, query: str, when: datetime, **options: object) -> Memory:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": THREAD,
            "user_name": "Mina",
            "new_dialog": {"uuid": f"{session}-d1", "query": query, "answer": "Nice.", "timestamp": when},
            "options": {"force_summary": True, **options},
        }
    )
    consolidate.run(engine, TENANT, request)
    [memory] = run_worker(engine)
    return memory


def marks(engine: Engine, memory: Memory) -> list[tuple[str | None, datetime]]:
    """What replaced the memory's key facts, and when: [] while they all hold."""
    return [(life.superseded_by, life.invalid_at) for life in stored(engine, memory).life.key_facts]


def recorded(engine: Engine) -> set[str]:
    """The memories with a statement in the thread's record."""
    record = engine.store.get_statements(TENANT, THREAD)
    return set() if record is None else {s.memory_id for s in record.statements}


def delete_memory(engine: Engine, memory: Memory) -> None:
    request = DeleteRequest(session_uuid=memory.session_uuid, dialog_uuid=memory.memory_id)
    delete.run(engine, TENANT, request)


@MOVES
def test_deleting_the_memory_that_replaced_a_fact_makes_the_fact_hold_again(
    engine: Engine, before: str, after: str
) -> None:
    # Given Mina in Seoul, then in Busan: the Seoul fact replaced by the Busan one
    seoul = say(engine, "s1", before, MARCH)
    busan = say(engine, "s2", after, MARCH + DAY)
    assert marks(engine, seoul) == [(busan.memory_id, busan.stated_at)]

    # When the Busan memory is deleted by id
    delete_memory(engine, busan)

    # Then the Seoul fact holds again, and the record no longer lists the Busan statement
    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}


def test_deleting_a_replacement_in_the_middle_hands_the_fact_to_the_next_statement(engine: Engine) -> None:
    # Given Seoul, then Busan, then Daegu: each replaced by the next
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    daegu = say(engine, "s3", "I moved to Daegu.", MARCH + 2 * DAY)

    # When the Busan memory is deleted
    delete_memory(engine, busan)

    # Then Seoul reads as replaced by Daegu, as of Daegu's event time; Daegu still holds
    assert marks(engine, seoul) == [(daegu.memory_id, daegu.stated_at)]
    assert marks(engine, daegu) == []
    assert recorded(engine) == {seoul.memory_id, daegu.memory_id}


def test_deleting_the_earliest_statement_leaves_the_later_ones_as_they_were(engine: Engine) -> None:
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    daegu = say(engine, "s3", "I moved to Daegu.", MARCH + 2 * DAY)

    delete_memory(engine, seoul)

    assert marks(engine, busan) == [(daegu.memory_id, daegu.stated_at)]
    assert marks(engine, daegu) == []
    assert recorded(engine) == {busan.memory_id, daegu.memory_id}


def test_deleting_the_turn_a_replacement_was_made_of_reopens_the_fact_with_its_session(
    engine: Engine,
) -> None:
    # Given Seoul replaced by Busan, whose session holds that one turn
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)

    # When that turn is deleted: its memory goes in cascade, and the emptied session with it
    result = delete.run(engine, TENANT, DeleteRequest(session_uuid="s2", dialog_uuid="s2-d1")).data
    assert result.deleted_memories == [busan.memory_id]
    assert engine.store.get_session(TENANT, "s2") is None

    # Then the Seoul fact holds again
    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}


def test_a_replacement_that_expired_and_was_swept_reopens_the_fact(engine: Engine, clock: SetClock) -> None:
    # Given Seoul replaced by a Busan memory that lives two days
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY, memory_ttl_seconds=2 * 86_400)
    assert marks(engine, seoul) == [(busan.memory_id, busan.stated_at)]

    # When it expires and the sweep removes it
    clock.advance(3 * 86_400)
    assert sweep.expire(engine) == [(TENANT, busan.memory_id)]

    # Then the Seoul fact holds again
    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}


def test_a_replacement_deleted_through_the_memory_bank_route_reopens_the_fact(engine: Engine) -> None:
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)

    bank.delete(engine, TENANT, busan.memory_id)

    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}


def test_a_delete_retried_after_its_memory_went_finishes_reopening(engine: Engine) -> None:
    # Given a delete that stopped after the store removed the Busan memory (nothing reopened yet)
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    engine.store.delete_memory(TENANT, busan.memory_id)
    assert marks(engine, seoul) == [(busan.memory_id, busan.stated_at)]

    # When the caller retries it: the memory is gone (404)
    with pytest.raises(NotFound):
        delete_memory(engine, busan)

    # Then the retry reopened the Seoul fact and took Busan out of the record; again changes nothing
    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}
    with pytest.raises(NotFound):
        delete_memory(engine, busan)
    assert marks(engine, seoul) == []


def test_a_record_entry_left_by_an_earlier_removal_is_passed_over(engine: Engine) -> None:
    # Given Seoul, Busan, Daegu, and Daegu's memory removed with nothing told (its statement
    # still in the record, as a store written before deletes reopened would leave it)
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    daegu = say(engine, "s3", "I moved to Daegu.", MARCH + 2 * DAY)
    engine.store.delete_memory(TENANT, daegu.memory_id)

    # When Busan is deleted
    delete_memory(engine, busan)

    # Then Seoul holds again: Daegu's stale statement replaces nothing
    assert marks(engine, seoul) == []


def test_a_removal_cut_short_is_repaired_by_the_next_statement_of_the_slot(engine: Engine) -> None:
    # Given Seoul replaced by Busan, and Busan's memory removed with nothing reopened (a sweep
    # stopped right after the store's removal)
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    engine.store.delete_memory(TENANT, busan.memory_id)

    # When Mina says where she lives next
    daegu = say(engine, "s3", "I moved to Daegu.", MARCH + 2 * DAY)

    # Then Seoul reads as replaced by Daegu, not by the memory that is gone
    assert marks(engine, seoul) == [(daegu.memory_id, daegu.stated_at)]
    assert recorded(engine) == {seoul.memory_id, daegu.memory_id}


@MOVES
def test_a_dialog_delete_retried_after_its_turn_went_finishes_reopening(
    engine: Engine, before: str, after: str
) -> None:
    # Given Seoul replaced by Busan, a memory of two turns, and a dialog delete that stopped after
    # the store removed the turn and the memory in cascade (nothing reopened yet)
    seoul = say(engine, "s1", before, MARCH)
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s2",
            "parent_session_uuid": THREAD,
            "user_name": "Mina",
            "new_dialog": {
                "uuid": "s2-d0",
                "query": "Hello again.",
                "answer": "Hi!",
                "timestamp": MARCH + DAY,
            },
        }
    )
    consolidate.run(engine, TENANT, request)
    busan = say(engine, "s2", after, MARCH + DAY)
    assert busan.source_dialog_uuids == ["s2-d0", "s2-d1"]
    engine.store.delete_dialog(TENANT, "s2", "s2-d1")
    assert marks(engine, seoul) == [(busan.memory_id, busan.stated_at)]

    # When the caller retries it: the turn is gone (404)
    retry = DeleteRequest(session_uuid="s2", dialog_uuid="s2-d1")
    with pytest.raises(NotFound):
        delete.run(engine, TENANT, retry)

    # Then the retry reopened the Seoul fact and took Busan out of the record; again changes nothing
    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}
    with pytest.raises(NotFound):
        delete.run(engine, TENANT, retry)
    assert marks(engine, seoul) == []


@MOVES
def test_a_dialog_delete_retried_after_it_took_the_sessions_last_turn_leaves_the_fact_holding(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, before: str, after: str
) -> None:
    # Given Seoul replaced by Busan, a memory made of its session's only turn, and a dialog delete
    # that dies right after the store removed the turn, its memory and the emptied session
    seoul = say(engine, "s1", before, MARCH)
    busan = say(engine, "s2", after, MARCH + DAY)
    assert marks(engine, seoul) == [(busan.memory_id, busan.stated_at)]
    removal = engine.store.delete_dialog

    def dies_after_the_removal(tenant: str, session_uuid: str, dialog_uuid: str) -> object:
        removal(tenant, session_uuid, dialog_uuid)
        raise ConnectionError("the handler died after the store's removal")

    request = DeleteRequest(session_uuid="s2", dialog_uuid="s2-d1")
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_dialog", dies_after_the_removal)
        with pytest.raises(ConnectionError):
            delete.run(engine, TENANT, request)
    assert engine.store.get_session(TENANT, "s2") is None
    assert engine.store.get_memory(TENANT, busan.memory_id) is None

    # When the caller retries it: the session is gone, and nothing leads to the thread (404)
    with pytest.raises(NotFound):
        delete.run(engine, TENANT, request)

    # Then the Seoul fact holds: it was reopened before the removal, while the turn led to it
    assert marks(engine, seoul) == []


def test_a_dialog_delete_that_died_before_its_removal_is_finished_by_its_retry(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given Seoul replaced by Busan, and a dialog delete of Busan's only turn that reopened Seoul
    # and died before the store's removal
    seoul = say(engine, "s1", "I live in Seoul.", MARCH)
    busan = say(engine, "s2", "I moved to Busan.", MARCH + DAY)

    def dies_before_the_removal(tenant: str, session_uuid: str, dialog_uuid: str) -> object:
        raise ConnectionError("the handler died before the store's removal")

    request = DeleteRequest(session_uuid="s2", dialog_uuid="s2-d1")
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_dialog", dies_before_the_removal)
        with pytest.raises(ConnectionError):
            delete.run(engine, TENANT, request)
    assert engine.store.get_memory(TENANT, busan.memory_id) is not None

    # When the caller retries it
    result = delete.run(engine, TENANT, request).data

    # Then the retry removes the Busan memory, Seoul holds, and the record lists Seoul alone
    assert result.deleted_memories == [busan.memory_id]
    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}
