"""Issue #45 §1: a thread's key facts have a life. A later statement of the same one-value fact
by the same character replaces the earlier one (kept, with `invalid_at` and `superseded_by`), by
event time, in English and Korean, on both store backends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import ConsolidateRequest, ForkRequest
from memory_engine.models.domain import Memory, MemoryFields
from memory_engine.ports import Extraction
from memory_engine.usecases import consolidate, fork, inspection
from tests.fakes.engine import ENGINE_BACKENDS, run_worker

TENANT = "acme"
THREAD = "thread-life"
MARCH = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 9, 10, 0, tzinfo=UTC)


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        engine.extractor = BuiltinExtractor()
        yield engine


def say(engine: Engine, session: str, query: str, answer: str, when: datetime, user: str = "Mina") -> Memory:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": THREAD,
            "user_name": user,
            "new_dialog": {"uuid": f"{session}-d1", "query": query, "answer": answer, "timestamp": when},
            "options": {"force_summary": True},
        }
    )
    consolidate.run(engine, TENANT, request)
    [memory] = run_worker(engine)
    return memory


def stored(engine: Engine, memory: Memory) -> Memory:
    found = engine.store.get_memory(TENANT, memory.memory_id)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("I live in Busan with my parents.", "I moved to Seoul last week for a new job."),
        ("나는 부산에 살아.", "지난주에 서울로 이사했어."),
        ("I have a dog named Max, a beagle.", "We adopted a puppy named Bori after Max passed."),
    ],
    ids=["residence-en", "residence-ko", "pet-en"],
)
def test_a_later_statement_replaces_the_earlier_fact_which_stays_as_history(
    engine: Engine, before: str, after: str
) -> None:
    # Given a thread where Mina said one thing in March
    first = say(engine, "s1", before, "Good to know.", MARCH)

    # When she states its new value in May, in another session
    second = say(engine, "s2", after, "Congratulations!", MAY)

    # Then the March memory keeps its fact, marked replaced by the May memory as of May
    old = stored(engine, first)
    assert old.fields.key_facts == first.fields.key_facts
    [life] = old.life.key_facts
    assert (life.superseded_by, life.invalid_at, life.subject) == (second.memory_id, MAY, "Mina")
    assert old.life.valid_from == MARCH
    # And the May memory still holds
    assert stored(engine, second).life.key_facts == []


def test_a_session_written_late_whose_statement_is_older_is_the_one_replaced(engine: Engine) -> None:
    # Given the May statement already written
    may = say(engine, "s2", "I moved to Seoul last week.", "Nice!", MAY)

    # When a March session arrives afterwards (an import, a slow client)
    march = say(engine, "s1", "I live in Busan with my parents.", "OK.", MARCH)

    # Then event time decides: March is replaced by May, May holds
    [life] = stored(engine, march).life.key_facts
    assert (life.superseded_by, life.invalid_at) == (may.memory_id, MAY)
    assert stored(engine, may).life.key_facts == []


def test_another_characters_statement_or_another_slot_replaces_nothing(engine: Engine) -> None:
    # Given Mina lives in Busan
    first = say(engine, "s1", "I live in Busan with my parents.", "OK.", MARCH)

    # When Jun (another user of the thread) moves, and Mina adopts a cat
    say(engine, "s2", "I moved to Seoul last week.", "Nice!", MAY, user="Jun")
    say(engine, "s3", "We adopted a kitten named Luna.", "Cute!", MAY)

    # Then Mina's residence still holds
    assert stored(engine, first).life.key_facts == []


def test_the_inspector_shows_which_key_fact_was_replaced_when_and_by_what(engine: Engine) -> None:
    # Given Mina's move from Busan to Seoul
    first = say(engine, "s1", "I live in Busan with my parents.", "OK.", MARCH)
    second = say(engine, "s2", "I moved to Seoul last week.", "Nice!", MAY)

    # When the inspector lists the thread's memories
    views = {view.memory_id: view for view in inspection.memories(engine, TENANT, THREAD).memories}

    # Then the March memory's view carries its life: stated in March, its fact replaced in May
    life = views[first.memory_id].life
    assert life.valid_from == MARCH
    assert [(fact.superseded_by, fact.invalid_at) for fact in life.key_facts] == [(second.memory_id, MAY)]


def test_a_forked_copy_of_a_fact_is_replaced_by_a_later_statement_of_the_thread(engine: Engine) -> None:
    # Given Mina's March residence, and its session forked into another session of the same thread
    first = say(engine, "s1", "I live in Busan with my parents.", "Good to know.", MARCH)
    request = ForkRequest(
        source_session_uuid="s1",
        target_session_uuid="s1-fork",
        cutoff_dialog_uuid="s1-d1",
        target_parent_session_uuid=THREAD,
    )
    [copy_id] = fork.run(engine, TENANT, request).data.copied_memories

    # When she states in May that she moved
    second = say(engine, "s2", "I moved to Seoul last week for a new job.", "Congratulations!", MAY)

    # Then the copy's fact is replaced by May's, and the original by its copy (one statement
    # stated twice, as the thread's history), so neither reads as current
    copy = engine.store.get_memory(TENANT, copy_id)
    assert copy is not None
    assert [(life.superseded_by, life.invalid_at) for life in copy.life.key_facts] == [
        (second.memory_id, MAY)
    ]
    assert [life.superseded_by for life in stored(engine, first).life.key_facts] == [copy_id]


class _Facts:
    """An extractor whose memories state the given key facts (as an LLM may: both the old value
    and the new one in one batch)."""

    def __init__(self, facts: list[str]) -> None:
        self.facts = facts

    def extract(self, turns: object, context: object) -> Extraction:
        fields = MemoryFields(summary="Mina talked about home.", key_facts=self.facts, characters=["Mina"])
        return Extraction(fields=fields, metadata={})


def test_a_memory_stating_the_old_and_the_new_value_is_not_replaced_by_itself(engine: Engine) -> None:
    # Given a memory of March that says where Mina lived
    first = say(engine, "s1", "I live in Busan.", "Nice.", MARCH)

    # When one memory of May states both the old value and the new one
    engine.extractor = _Facts(["Mina: I live in Busan.", "Mina: I moved to Seoul last week."])
    second = say(engine, "s2", "I live in Busan. Well, I moved to Seoul last week.", "Oh!", MAY)

    # Then it holds: neither of its facts is marked replaced by itself
    assert stored(engine, second).life.key_facts == []
    # And the March fact is replaced by it
    assert [life.superseded_by for life in stored(engine, first).life.key_facts] == [second.memory_id]
