"""Issue #34 §2: a later statement that updates an earlier one supersedes it in bank generate and
in a thread's facts; a sentence that leans on the one before stays with it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_engine.engine import Engine
from memory_engine.extraction.fact_extractor import FactOperation, candidate_sentences, extract_facts_builtin
from memory_engine.extraction.fact_slots import slot_of
from memory_engine.models.bank import CreateMemoryRequest, GenerateMemoriesRequest, RetrieveMemoriesRequest
from memory_engine.usecases import bank, bank_generate, bank_retrieve
from tests.fakes.engine import ENGINE_BACKENDS

TENANT = "acme"
MOVED = "지난달에 서울로 이사했어. 그리고 새 강아지를 입양했어! 이름은 보리야."


@pytest.fixture
def engine() -> Iterator[Engine]:
    with ENGINE_BACKENDS["local"]() as engine:
        yield engine


def generate(engine: Engine, scope: dict[str, str], text: str) -> None:
    events = [{"content": {"role": "user", "parts": [{"text": text}]}}]
    request = GenerateMemoriesRequest.model_validate(
        {"scope": scope, "direct_contents_source": {"events": events}}
    )
    bank_generate.run(engine, TENANT, request)


def facts_of(engine: Engine, scope: dict[str, str]) -> list[str]:
    request = RetrieveMemoriesRequest.model_validate({"scope": scope, "simple_retrieval_params": {}})
    return [hit.memory.fact for hit in bank_retrieve.run(engine, TENANT, request).retrieved_memories]


@pytest.mark.parametrize(
    "scope", [{"user_id": "u1"}, {"parent_session_uuid": "thread-1"}], ids=["bank", "thread"]
)
def test_moving_to_seoul_supersedes_living_in_busan_and_the_dog_keeps_its_name(
    engine: Engine, scope: dict[str, str]
) -> None:
    # Given a scope (a bank user, or an engine thread) that knows the user lives in Busan
    bank.create(engine, TENANT, CreateMemoryRequest(fact="사용자는 부산에 산다.", scope=scope))

    # When the user says they moved to Seoul and adopted a dog named 보리
    generate(engine, scope, MOVED)

    # Then Busan is gone, Seoul is there, and the dog's fact keeps its name
    facts = facts_of(engine, scope)
    assert "사용자는 부산에 산다." not in facts
    assert sorted(facts) == sorted(["지난달에 서울로 이사했어.", "새 강아지를 입양했어! 이름은 보리야."])


def test_the_latest_of_two_residences_in_one_message_is_the_one_added() -> None:
    # Given one message saying where the user lived and then where they moved
    operations = extract_facts_builtin(["I live in Busan. Last month I moved to Seoul."], [], "en")

    # Then only the move is a fact
    assert operations == [FactOperation(op="add", fact="Last month I moved to Seoul.")]


def test_a_new_job_updates_the_old_one_and_deletes_any_other_of_that_slot() -> None:
    # Given two stored facts about the user's job and one about their cat
    existing = [
        ("m1", "The user works as a nurse."),
        ("m2", "I work as a night nurse."),
        ("m3", "I have a cat."),
    ]

    # When the user names a new job
    operations = extract_facts_builtin(["요즘 출판사에서 편집자로 일해."], existing, "ko")

    # Then the first job fact is updated, the second deleted, the cat untouched
    assert operations == [
        FactOperation(op="update", id="m1", fact="요즘 출판사에서 편집자로 일해."),
        FactOperation(op="delete", id="m2", fact="I work as a night nurse."),
    ]


@pytest.mark.parametrize(
    ("sentence", "slot"),
    [
        ("사용자는 부산에 산다.", "residence"),
        ("I moved to Seoul last month.", "residence"),
        ("원래는 부산에서 부모님이랑 같이 살았어.", None),
        ("I used to live in Busan.", None),
        ("다음 달에 제주도로 이사 가요.", "plan:move"),
        ("나는 출판사에서 편집자로 일해.", "job"),
        ("I have a dog named Max.", "pet:dog"),
        ("My sister Ana lives in Porto and teaches chemistry.", None),
        ("언니는 부산에 살아.", None),
        ("The user works as a nurse.", "job"),
    ],
)
def test_which_sentences_state_a_one_value_fact(sentence: str, slot: str | None) -> None:
    assert slot_of(sentence) == slot


def test_a_leading_connective_is_dropped_and_a_follow_up_stays_with_its_sentence() -> None:
    assert candidate_sentences([MOVED, "And I have a cat. Her name is Luna."]) == [
        "지난달에 서울로 이사했어.",
        "새 강아지를 입양했어! 이름은 보리야.",
        "I have a cat. Her name is Luna.",
    ]


def test_a_contradicted_bank_fact_is_retired_not_deleted_and_reads_as_history(engine: Engine) -> None:
    # Given a user who works as a nurse, then as an editor (stored as one fact, then reworded)
    scope = {"user_id": "u-history"}
    nurse = bank.create(engine, TENANT, CreateMemoryRequest(fact="The user works as a nurse.", scope=scope))
    other = bank.create(engine, TENANT, CreateMemoryRequest(fact="I work as a night nurse.", scope=scope))

    # When the user names a new job
    generate(engine, scope, "요즘 출판사에서 편집자로 일해.")

    # Then one job fact is reworded, its old wording kept as a revision ...
    ids = [nurse.name.removeprefix("memories/"), other.name.removeprefix("memories/")]
    histories = {memory_id: bank.revisions(engine, TENANT, memory_id).revisions for memory_id in ids}
    [kept] = [memory_id for memory_id in ids if len(histories[memory_id]) == 2]
    [retired_id] = [memory_id for memory_id in ids if memory_id != kept]
    before, now = histories[kept]
    assert (before.reason, now.fact) == ("update", "요즘 출판사에서 편집자로 일해.")
    # ... and the other is retired, not deleted: out of the scope's facts, readable by name
    assert facts_of(engine, scope) == ["요즘 출판사에서 편집자로 일해."]
    retired = bank.get(engine, TENANT, retired_id)
    assert retired.invalidAt is not None and retired.supersededBy == kept
    assert histories[retired_id][-1].reason == "contradiction"
