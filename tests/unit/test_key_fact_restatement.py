"""Issue #45: a key-fact correction that changes what the fact states (another slot, as when
"I live in Busan" is corrected to "I have a dog") keeps the thread's statements record true to the
memory's key facts: the old slot leaves it, the new one joins it and replaces (or is replaced) as
a worker's statement would. Both store backends, the built-in extractor, English and Korean."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.bank import PatchMemoryRequest
from memory_engine.models.domain import Memory
from memory_engine.usecases import key_facts
from tests.fakes.engine import ENGINE_BACKENDS
from tests.fakes.ports import SetClock
from tests.unit.test_thread_fact_life import MARCH, TENANT, THREAD, say, stored

DAY = timedelta(days=1)


@pytest.fixture
def clock() -> SetClock:
    return SetClock(MARCH + 10 * DAY)


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest, clock: SetClock) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param](clock=clock) as engine:
        engine.extractor = BuiltinExtractor()
        yield engine


def recorded(engine: Engine, memory: Memory) -> list[tuple[int, str]]:
    """The memory's statements in its thread's record: (key fact index, slot)."""
    record = engine.store.get_statements(TENANT, THREAD)
    assert record is not None
    return [(s.index, s.slot) for s in record.statements if s.memory_id == memory.memory_id]


def correct(engine: Engine, memory: Memory, fact: str) -> None:
    key_facts.patch_key_fact(engine, TENANT, memory.memory_id, 0, PatchMemoryRequest(fact=fact))


@pytest.mark.parametrize(
    ("said", "corrected", "before", "after"),
    [
        ("I live in Busan.", "Mina: I have a dog.", "residence", "pet:dog"),
        ("나는 부산에 살아.", "Mina: 나는 강아지를 키워.", "residence", "pet:dog"),
    ],
)
def test_a_correction_to_another_slot_moves_the_statement_in_the_record(
    engine: Engine, said: str, corrected: str, before: str, after: str
) -> None:
    # Given a memory whose key fact states where Mina lives, in the thread's record
    memory = say(engine, "s1", said, "Nice.", MARCH)
    assert recorded(engine, memory) == [(0, before)]

    # When the key fact is corrected to say she has a dog
    correct(engine, memory, corrected)

    # Then the record holds the dog, not the residence, at that key fact
    assert recorded(engine, memory) == [(0, after)]


def test_a_corrected_statement_replaces_the_earlier_one_of_its_new_slot(engine: Engine) -> None:
    # Given Mina's dog Max stated first, then where she lives
    dog = say(engine, "s1", "I have a dog named Max.", "Cute!", MARCH)
    home = say(engine, "s2", "I live in Busan.", "Nice.", MARCH + DAY)
    assert not stored(engine, dog).life.key_facts

    # When the later key fact is corrected to name her dog
    correct(engine, home, "Mina: I have a dog named Bori.")

    # Then the earlier dog is replaced by the corrected statement, as a worker would mark it
    [replaced] = stored(engine, dog).life.key_facts
    assert (replaced.index, replaced.superseded_by, replaced.invalid_at) == (
        0,
        home.memory_id,
        home.stated_at,
    )


def test_a_corrected_statement_is_replaced_by_a_later_one_of_its_new_slot(engine: Engine) -> None:
    # Given where Mina lives stated first, then her dog Max
    home = say(engine, "s1", "I live in Busan.", "Nice.", MARCH)
    dog = say(engine, "s2", "I have a dog named Max.", "Cute!", MARCH + DAY)

    # When the earlier key fact is corrected to name a dog
    correct(engine, home, "Mina: I have a dog named Bori.")

    # Then the corrected statement reads as replaced by the later dog, which still holds
    [replaced] = stored(engine, home).life.key_facts
    assert (replaced.superseded_by, replaced.invalid_at) == (dog.memory_id, dog.stated_at)
    assert not stored(engine, dog).life.key_facts


def test_a_correction_that_states_no_slot_leaves_the_record(engine: Engine) -> None:
    memory = say(engine, "s1", "I live in Busan.", "Nice.", MARCH)

    correct(engine, memory, "Mina: I like rainy days.")

    assert recorded(engine, memory) == []


def test_the_fact_a_corrected_statement_had_replaced_holds_again(engine: Engine) -> None:
    # Given Mina in Seoul, then in Busan: the Seoul fact replaced by the Busan one
    seoul = say(engine, "s1", "I live in Seoul.", "Nice.", MARCH)
    busan = say(engine, "s2", "I live in Busan.", "Nice.", MARCH + DAY)
    [replaced] = stored(engine, seoul).life.key_facts
    assert replaced.superseded_by == busan.memory_id

    # When the Busan fact is corrected: it was about her dog, not where she lives
    correct(engine, busan, "Mina: I have a dog.")

    # Then nothing replaces Seoul any more: it holds again, and the record still lists it
    assert stored(engine, seoul).life.key_facts == []
    assert recorded(engine, seoul) == [(0, "residence")]
