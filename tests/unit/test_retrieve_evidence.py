"""Retrieve hits name the turns that matched (evidence), explain their score, and fit a token budget."""

from __future__ import annotations

import pytest

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest, RetrieveResponse
from memory_engine.retrieval.tokens import count_tokens
from memory_engine.usecases import consolidate, retrieve
from tests.fakes.engine import fake_engine, run_worker

TENANT = "acme"
FACT = "My tortoise Sheldon loves strawberries"


def say(engine: Engine, n: int, text: str) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": f"d{n}", "query": text, "answer": ""},
            "user_name": "Ana",
        }
    )
    consolidate.run(engine, TENANT, request)


def ask(engine: Engine, query: str, recent: tuple[str, ...] = (), **options: object) -> RetrieveResponse:
    request = RetrieveRequest.model_validate(
        {
            "parent_session_uuids": ["thread-1"],
            "user_input": {"query": query},
            "recent_dialogs": list(recent),
            "options": options,
        }
    )
    return retrieve.run(engine, TENANT, request)


@pytest.fixture
def engine() -> Engine:
    # Given 20 turns, two memories of 8 extracted (d1-d8, d9-d16), d17-d20 still buffered; d3 holds
    # the fact and d18 a second mention of the tortoise
    engine = fake_engine()
    for n in range(1, 21):
        text = FACT if n == 3 else f"Filler remark number {n} about the weather"
        say(engine, n, "Sheldon the tortoise slept all day" if n == 18 else text)
    run_worker(engine)
    return engine


def test_a_memory_hits_evidence_names_the_turn_that_matched_first(engine: Engine) -> None:
    hits = ask(engine, "does the tortoise Sheldon love strawberries?", limit=5).data

    memory = next(hit for hit in hits if hit.kind == "memory")
    assert memory.evidence[0].dialog_uuid == "d3"
    assert memory.evidence[0].text == f"Ana: {FACT}"
    scores = [turn.score for turn in memory.evidence]
    assert scores == sorted(scores, reverse=True)
    assert {turn.dialog_uuid for turn in memory.evidence} <= set(memory.source_dialog_uuids)


def test_a_buffered_turn_hit_is_its_own_evidence(engine: Engine) -> None:
    hits = ask(engine, "tortoise slept all day", limit=5).data

    turn = next(hit for hit in hits if hit.kind == "dialog")
    assert [e.dialog_uuid for e in turn.evidence] == [turn.memory_id]
    assert turn.evidence[0].text == turn.content


def test_score_parts_come_only_with_explain_and_add_up_to_the_score(engine: Engine) -> None:
    plain = ask(engine, "tortoise strawberries", limit=3).data
    explained = ask(engine, "tortoise strawberries", limit=3, explain=True).data

    assert all(hit.score_parts is None for hit in plain)
    for hit in explained:
        assert hit.score_parts is not None and {"dense", "lexical"} <= set(hit.score_parts)
        assert sum(hit.score_parts.values()) == pytest.approx(hit.score, abs=1e-5)


def test_an_empty_last_dialog_uuid_is_the_same_as_none() -> None:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["t"], "last_dialog_uuid": "", "user_input": {"query": "q"}}
    )

    assert request.last_dialog_uuid is None
    assert request.excluded_dialogs() == set()


@pytest.mark.parametrize("budget", [5, 12, 40, 400])
def test_max_tokens_never_exceeds_the_budget_and_reports_what_it_returned(
    engine: Engine, budget: int
) -> None:
    response = ask(engine, "does the tortoise Sheldon love strawberries?", limit=10, max_tokens=budget)

    used = sum(count_tokens(hit.content) for hit in response.data)
    assert response.tokens == used
    assert used <= budget


def test_a_memory_cut_to_the_budget_keeps_whole_matched_turns(engine: Engine) -> None:
    # Given a budget too small for a memory's content but enough for its best turn (the buffered
    # tortoise turn d18 is in the caller's prompt already, so the memory comes first)
    question, recent = "does the tortoise Sheldon love strawberries?", ("d18",)
    whole = ask(engine, question, recent, limit=1).data[0]
    budget = count_tokens(whole.evidence[0].text)
    assert whole.kind == "memory" and count_tokens(whole.content) > budget

    cut = ask(engine, question, recent, limit=1, max_tokens=budget).data[0]

    # Then the content is the matched turn itself, never part of one
    assert cut.truncated
    assert cut.content == f"Ana: {FACT}"
    assert [e.dialog_uuid for e in cut.evidence] == ["d3"]


def test_a_buffered_line_by_the_speaker_the_question_names_gets_the_speaker_part() -> None:
    # Given two buffered lines, one by Ana that mentions Ben, one by Ben
    engine = fake_engine()
    lines = [("Ana", "Ben planted tulips in the garden"), ("Ben", "I planted tulips in the garden")]
    for n, (speaker, text) in enumerate(lines):
        request = ConsolidateRequest.model_validate(
            {
                "session_uuid": "s1",
                "parent_session_uuid": "thread-1",
                "new_dialog": {"uuid": f"d{n}", "query": text, "answer": ""},
                "user_name": speaker,
            }
        )
        consolidate.run(engine, TENANT, request)

    # When the question names Ben
    hits = ask(engine, "What did Ben plant in the garden?", limit=2, explain=True).data

    # Then only Ben's own line carries the speaker part, and it comes first
    parts = {hit.memory_id: hit.score_parts for hit in hits}
    assert parts["d1"] is not None and parts["d1"]["speaker"] == pytest.approx(0.05)
    assert parts["d0"] is not None and parts["d0"]["speaker"] == 0.0
    assert hits[0].memory_id == "d1"


def test_an_extracted_turn_by_the_speaker_the_question_names_gives_its_memory_the_speaker_part(
    engine: Engine,
) -> None:
    # (the memory's hit, whatever ranks beside it: a buffered turn names the tortoise too)
    named = next(
        hit
        for hit in ask(engine, "What does Ana's tortoise Sheldon love?", limit=5, explain=True).data
        if hit.kind == "memory"
    )
    unnamed = next(
        hit
        for hit in ask(engine, "What does the tortoise Sheldon love?", limit=5, explain=True).data
        if hit.kind == "memory"
    )

    assert named.kind == "memory" and named.score_parts is not None
    assert named.score_parts["speaker"] == pytest.approx(0.05)
    assert unnamed.score_parts is not None and unnamed.score_parts["speaker"] == 0.0


def test_a_budget_below_the_smallest_whole_turn_says_so_instead_of_an_empty_list(engine: Engine) -> None:
    # Given a question with hits, and a budget smaller than any of their turns
    question = "does the tortoise Sheldon love strawberries?"
    hits = ask(engine, question, limit=10).data
    smallest = min(count_tokens(turn.text) for hit in hits for turn in hit.evidence)
    # When retrieve packs into that budget
    response = ask(engine, question, limit=10, max_tokens=smallest - 1)
    # Then nothing comes back, and the answer says why and what budget would do
    assert response.data == [] and response.tokens == 0
    assert response.message is not None
    assert "max_tokens" in response.message and f"at least {smallest}" in response.message


def test_a_budget_that_fits_leaves_no_message(engine: Engine) -> None:
    response = ask(engine, "does the tortoise Sheldon love strawberries?", limit=10, max_tokens=400)

    assert response.data and response.message is None
