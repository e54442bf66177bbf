"""Issue #45, "nothing half-written stays", for the removals that are no request's delete:
forgetting a chat user, and the sweep's removal of expired memories (their own expiry or their
tenant's retention, with the raw turns the retention removes after them). Each is recorded
before its first change (`usecases/delete_intents.py`); one whose process dies half-way is
finished by a later sweep (`usecases/unfinished_deletes.py`). Both store backends, English and
Korean where the text matters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.domain import TurnStatus, scope_key
from memory_engine.models.messages import chat_session_uuid
from memory_engine.usecases import forget_user, sweep, unfinished_deletes
from memory_engine.usecases.retention import set_retention
from tests.fakes.engine import ENGINE_BACKENDS, run_worker
from tests.fakes.ports import RecordingChat, SetClock
from tests.unit.test_bank_fact_reopen import TENANT as BANK_TENANT
from tests.unit.test_bank_fact_reopen import holds, replaced
from tests.unit.test_chat_memory import USER, ask
from tests.unit.test_delete_intents import LATER, begun, dies_after, dies_before
from tests.unit.test_removed_facts import DAY, MOVES, THREAD, marks, recorded, say
from tests.unit.test_thread_fact_life import MARCH, TENANT
from tests.unit.test_turn_retention import say as chat_turn

HOUR = 3600
# What a chat user tells, as facts of their scope: English and Korean.
PETS = pytest.mark.parametrize(
    ("first", "second", "query"),
    [
        ("My dog is named Pepper.", "My cat is named Nabi.", "Pepper Nabi dog cat"),
        ("우리 강아지 이름은 페퍼야.", "우리 고양이 이름은 나비야.", "페퍼 나비 강아지 고양이"),
    ],
    ids=["en", "ko"],
)


@pytest.fixture
def chat_engine(clock: SetClock) -> Iterator[Engine]:
    """An engine on the first backend the chat tests use, with an upstream chat model."""
    with ENGINE_BACKENDS["local"](clock=clock, chat_model="default-model") as engine:
        engine.chat = RecordingChat()
        yield engine


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def each_chat_engine(request: pytest.FixtureRequest, clock: SetClock) -> Iterator[Engine]:
    """An engine on each backend (local and moto), reading `clock`, with an upstream chat model."""
    with ENGINE_BACKENDS[request.param](clock=clock, chat_model="default-model") as engine:
        engine.chat = RecordingChat()
        yield engine


def keys_begun(engine: Engine) -> list[tuple[str, str]]:
    """(route, target) of every delete left begun."""
    return [(route, target) for _, route, _, target in begun(engine)]


@PETS
def test_forgetting_a_user_that_died_after_its_first_removal_is_finished_by_the_sweep(
    each_chat_engine: Engine,
    clock: SetClock,
    monkeypatch: pytest.MonkeyPatch,
    first: str,
    second: str,
    query: str,
) -> None:
    engine = each_chat_engine
    # Given a chat user with two recorded exchanges and their facts, and a forget of the user
    # that dies right after the store removed its first memory
    ask(engine, first)
    ask(engine, second)
    run_worker(engine)
    thread = scope_key({"userid": USER})
    assert len(engine.store.list_thread_memories(TENANT, thread)) >= 2
    assert engine.index.search(TENANT, [thread], query, [], 10) != []
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", dies_after(engine.store.delete_memory))
        with pytest.raises(ConnectionError):
            forget_user.run(engine, TENANT, USER)

    # Then the forget is left begun, half-done: a memory gone, the others and the session kept
    assert keys_begun(engine) == [("user", USER)]
    assert engine.store.list_thread_memories(TENANT, thread) != []

    # When no retry comes, and the sweep runs minutes later
    clock.advance(LATER)
    sweep.run(engine)

    # Then nothing of the user is left: memories, chat session, index documents (the first
    # memory's too, though no listing finds it any more), the thread's records; nothing begun
    assert engine.store.list_thread_memories(TENANT, thread) == []
    assert engine.store.get_session(TENANT, chat_session_uuid(USER)) is None
    assert engine.index.search(TENANT, [thread], query, [], 10) == []
    assert engine.index.search(TENANT, [thread], query, [], 10, kind="turn") == []
    assert engine.store.get_statements(TENANT, thread) is None
    assert begun(engine) == []


def test_the_sweep_finishes_a_large_forget_a_bounded_part_at_a_time(
    chat_engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = chat_engine
    # Given a user with two facts, pages of one fact, one page a finish, and a forget of the user
    # that died before its first removal
    ask(engine, "My dog is named Pepper.")
    ask(engine, "My cat is named Nabi.")
    run_worker(engine)
    thread = scope_key({"userid": USER})
    assert len(engine.store.list_thread_memories(TENANT, thread)) == 2
    monkeypatch.setattr(forget_user, "_PAGE", 1)
    monkeypatch.setattr(unfinished_deletes, "USER_PAGES_PER_FINISH", 1)
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", dies_before)
        with pytest.raises(ConnectionError):
            forget_user.run(engine, TENANT, USER)

    # When the sweep runs minutes later
    clock.advance(LATER)
    finished = unfinished_deletes.finish_begun(engine)

    # Then it removed one page and left the forget begun anew, for a later sweep
    assert finished == []
    assert len(engine.store.list_thread_memories(TENANT, thread)) == 1
    assert keys_begun(engine) == [("user", USER)]
    assert unfinished_deletes.finish_begun(engine) == []  # begun a moment ago: left alone

    # And when the next sweep runs minutes later, the forget ends: nothing of the user is left
    clock.advance(LATER)
    assert [intent.target for intent in unfinished_deletes.finish_begun(engine)] == [USER]
    assert engine.store.list_thread_memories(TENANT, thread) == []
    assert engine.store.get_session(TENANT, chat_session_uuid(USER)) is None
    assert begun(engine) == []


def test_forgetting_a_user_leaves_nothing_begun(chat_engine: Engine) -> None:
    # Given a user with a recorded exchange, and a user with nothing stored
    ask(chat_engine, "My dog is named Pepper.")
    run_worker(chat_engine)

    # When both are forgotten (the second by its queued pass too)
    forget_user.run(chat_engine, TENANT, USER)
    forget_user.run(chat_engine, TENANT, "someone-else")
    run_worker(chat_engine)

    # Then no delete is left begun
    assert begun(chat_engine) == []


@MOVES
def test_an_expiry_that_died_after_its_first_removal_is_finished_by_the_sweep_from_its_record(
    engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch, before: str, after: str
) -> None:
    # Given Seoul replaced by a Busan memory that lives two days, and a sweep, once it expired,
    # that dies right after the store removed it
    engine.extractor = BuiltinExtractor()
    seoul = say(engine, "s1", before, MARCH)
    busan = say(engine, "s2", after, MARCH + DAY, memory_ttl_seconds=2 * 86_400)
    assert marks(engine, seoul) == [(busan.memory_id, busan.stated_at)]
    clock.advance(3 * 86_400)
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", dies_after(engine.store.delete_memory))
        with pytest.raises(ConnectionError):
            sweep.run(engine)

    # Then the expiry is left begun: Busan gone from the store, still in the thread's record
    assert [route for route, _ in keys_begun(engine)] == ["expiry"]
    assert engine.store.expired_memories(clock.now(), 10) == []
    assert recorded(engine) == {seoul.memory_id, busan.memory_id}

    # When the sweep runs minutes later (nothing lists Busan any more: only the record names it)
    clock.advance(LATER)
    sweep.run(engine)

    # Then Seoul holds, the record lists it alone, Busan's documents are gone, nothing is begun
    assert marks(engine, seoul) == []
    assert recorded(engine) == {seoul.memory_id}
    hits = engine.index.search(TENANT, [THREAD], f"{before} {after}", [], 10)
    assert busan.memory_id not in {hit.doc_id for hit in hits}
    assert begun(engine) == []


def test_an_expired_fact_whose_removal_died_leaves_the_fact_it_retired_holding(
    engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a nurse fact a merge retired as replaced by an editor fact that lives an hour, and a
    # sweep, once it expired, that dies right after the store removed it
    retired, successor = replaced(engine, ttl_seconds=HOUR)
    clock.advance(2 * HOUR)
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", dies_after(engine.store.delete_memory))
        with pytest.raises(ConnectionError):
            sweep.run(engine)

    # Then the nurse fact holds already: reopened before the removal, from the fact as read
    assert holds(engine, retired)

    # And when the sweep runs minutes later, it ends the expiry, the editor fact's documents gone
    clock.advance(LATER)
    sweep.run(engine)
    assert holds(engine, retired)
    hits = engine.index.search(BANK_TENANT, [scope_key({"user_id": "u-jobs"})], "편집자 editor", [], 10)
    assert successor not in {hit.doc_id for hit in hits}
    assert begun(engine) == []


def statuses(engine: Engine, session: str) -> dict[str, TurnStatus]:
    return {turn.dialog_uuid: turn.status for turn in engine.store.list_turns(TENANT, session)}


def test_a_retention_sweep_that_died_after_removing_the_memory_removes_its_turns_later(
    engine: Engine, clock: SetClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a tenant keeping 30 days, a memory of two turns, and, 31 days later, a sweep that dies
    # right after the store removed the memory (its turns left as forgotten history)
    set_retention(engine.store, TENANT, 30)
    chat_turn(engine, "s1", "d1")
    chat_turn(engine, "s1", "d2", force=True)
    [memory] = run_worker(engine)
    clock.advance(31 * 86_400)
    with monkeypatch.context() as patch:
        patch.setattr(engine.store, "delete_memory", dies_after(engine.store.delete_memory))
        with pytest.raises(ConnectionError):
            sweep.run(engine)
    assert engine.store.get_memory(TENANT, memory.memory_id) is None
    assert set(statuses(engine, "s1")) == {"d1", "d2"}
    assert [route for route, _ in keys_begun(engine)] == ["expiry"]

    # When the sweep runs minutes later (nothing lists the memory any more)
    clock.advance(LATER)
    sweep.run(engine)

    # Then the raw turns and the session's documents are gone, and nothing is begun
    assert statuses(engine, "s1") == {}
    assert engine.index.search(TENANT, ["thread-1"], "river", [], k=10, kind="turn") == []
    assert begun(engine) == []


def test_expiries_that_end_leave_nothing_begun(engine: Engine, clock: SetClock) -> None:
    # Given a tenant keeping 30 days and a memory of two turns
    set_retention(engine.store, TENANT, 30)
    chat_turn(engine, "s1", "d1")
    chat_turn(engine, "s1", "d2", force=True)
    run_worker(engine)

    # When it expires and the sweep removes it with its turns
    clock.advance(31 * 86_400)
    sweep.run(engine)

    # Then nothing is left begun
    assert statuses(engine, "s1") == {}
    assert begun(engine) == []
