"""What retrieve gathers for fusion: the candidates of both sources, each built the same way."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.retrieval.features import MEMORY_FEATURES, TURN_FEATURES
from memory_engine.retrieval.fusion import rank
from memory_engine.usecases import consolidate, retrieve
from memory_engine.usecases.retrieve import Gathered
from tests.fakes.engine import fake_engine, run_worker
from tests.unit.test_retrieve_evidence import FACT, TENANT, say


@pytest.fixture
def engine() -> Engine:
    # Given 20 turns, d1-d16 extracted into two memories and d17-d20 still buffered; the tortoise
    # is named in d3 (extracted) and in d18 and d19 (buffered)
    engine = fake_engine()
    for n in range(1, 21):
        text = FACT if n == 3 else f"Filler remark number {n} about the weather"
        if n in (18, 19):
            text = "Sheldon the tortoise slept all day" if n == 18 else "the tortoise ate"
        say(engine, n, text)
    run_worker(engine)
    return engine


def _gather(engine: Engine, query: str) -> Gathered:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": query}}
    )
    return retrieve.gather(engine, TENANT, request)


def test_without_one_lexical_scale_each_sources_bm25_is_divided_by_the_best_of_that_source(
    engine: Engine,
) -> None:
    engine = replace(engine, retrieval=replace(engine.retrieval, one_lexical_scale=False))
    gathered = _gather(engine, "tortoise Sheldon")

    indexed = [turn.features["lexical"] for turn in gathered.turns if turn.memory_id]
    buffered = [turn.features["lexical"] for turn in gathered.turns if turn.memory_id is None]
    assert max(indexed) == 1.0 and max(buffered) == 1.0
    assert 0.0 < min(value for value in buffered if value) < 1.0


def test_indexed_and_buffered_turns_are_scored_by_one_bm25(engine: Engine) -> None:
    # the shortest line naming the tortoise (d19, buffered) is the best lexical match of all
    gathered = _gather(engine, "tortoise")

    lexical = {turn.key: turn.features["lexical"] for turn in gathered.turns}
    best = max(lexical, key=lambda key: lexical[key])
    assert best.endswith(":d19") and lexical[best] == 1.0
    # the extracted fact's turn, longer, counts less on that one scale (alone it was its source's best)
    assert 0.0 < max(lexical[turn.key] for turn in gathered.turns if turn.memory_id) < 1.0


def test_the_best_memory_document_counts_the_square_of_the_memory_sides_best_turn(engine: Engine) -> None:
    gathered = _gather(engine, "tortoise")

    best_indexed = max(turn.features["lexical"] for turn in gathered.turns if turn.memory_id)
    best_document = max(memory.features["memory"] for memory in gathered.memories)
    assert 0.0 < best_indexed < 1.0
    assert best_document == pytest.approx(best_indexed**2)


def test_at_share_power_1_the_best_memory_document_counts_what_the_memory_sides_best_turn_counts(
    engine: Engine,
) -> None:
    engine = replace(engine, retrieval=replace(engine.retrieval, memory_share_power=1.0))
    gathered = _gather(engine, "tortoise")

    best_indexed = max(turn.features["lexical"] for turn in gathered.turns if turn.memory_id)
    best_document = max(memory.features["memory"] for memory in gathered.memories)
    assert best_document == pytest.approx(best_indexed)
    assert best_document < 1.0


def test_memory_documents_keep_their_own_scale_when_nothing_is_buffered() -> None:
    # Given eight turns naming the tortoise, all extracted (the last closed with force_summary)
    engine = fake_engine()
    for n in range(1, 9):
        text = FACT if n == 3 else f"Filler remark number {n} about the tortoise and the weather"
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": f"d{n}", "query": text, "answer": ""},
            "user_name": "Ana",
            "options": {"force_summary": n == 8},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))
    run_worker(engine)

    gathered = _gather(engine, "tortoise")

    assert not gathered.buffered
    assert max(memory.features["memory"] for memory in gathered.memories) == 1.0


def test_indexed_and_buffered_turns_carry_the_same_features(engine: Engine) -> None:
    gathered = _gather(engine, "tortoise Sheldon")

    assert {turn.memory_id is None for turn in gathered.turns} == {True, False}
    indexed = {tuple(turn.features) for turn in gathered.turns if turn.memory_id}
    buffered = {tuple(turn.features) for turn in gathered.turns if turn.memory_id is None}
    assert indexed == {TURN_FEATURES}
    # a buffered turn is its own unit: it also carries its unit document's features, from itself
    assert buffered == {(*TURN_FEATURES, *MEMORY_FEATURES)}


def test_a_buffered_turn_and_a_memory_are_scored_from_the_same_parts(engine: Engine) -> None:
    gathered = _gather(engine, "tortoise Sheldon")

    units = rank(gathered.memories, gathered.turns, engine.retrieval.weights)
    memory_parts = {frozenset(unit.parts) - {"handicap"} for unit in units if unit.memory_id and unit.turns}
    turn_parts = {frozenset(unit.parts) for unit in units if unit.memory_id is None}
    assert memory_parts == turn_parts == {frozenset((*TURN_FEATURES, *MEMORY_FEATURES))}


def test_a_buffered_turn_ranks_with_no_memory_id_and_its_hit_names_its_dialog(engine: Engine) -> None:
    gathered = _gather(engine, "tortoise slept all day")

    units = rank(gathered.memories, gathered.turns, engine.retrieval.weights)
    buffered = [unit for unit in units if unit.memory_id is None]
    assert {unit.key for unit in buffered} == set(gathered.buffered)
    assert all(unit.key == unit.memory_id for unit in units if unit.memory_id is not None)
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": "tortoise slept all day"}}
    )
    hits = retrieve.run(engine, TENANT, request).data
    assert {hit.memory_id for hit in hits if hit.kind == "dialog"} <= {"d17", "d18", "d19", "d20"}


def test_a_retrieve_analyses_its_question_once_for_every_scorer(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the analyzer, counted wherever the use case and its scorers reach it
    from memory_engine.retrieval import features, speakers, text

    question = "what did Sheldon the tortoise eat"
    analysed: list[str] = []

    def counted(value: str) -> list[str]:
        analysed.append(value)
        return text.tokenize(value)

    for module in (features, speakers):
        monkeypatch.setattr(module, "tokenize", counted)
    speakers._name_terms.cache_clear()

    # When a retrieve gathers over memories and buffered turns, and ranks
    gathered = _gather(engine, question)

    # Then the question was analysed once (`Query.terms`), for the buffered turns' BM25 and the speakers
    assert analysed.count(question) == 1
    assert gathered.query.terms == tuple(text.tokenize(question))
    assert gathered.buffered
