"""What retrieve gathers for fusion: the candidates of both sources, each built the same way."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory_engine.engine import Engine
from memory_engine.indexing.documents import turn_embedding_text
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
    # Given the analyzer, counted wherever the use case, its scorers and the index reach it
    from memory_engine.adapters.local import memory_index
    from memory_engine.retrieval import features, speakers, text

    question = "what did Sheldon the tortoise eat"
    analysed: list[str] = []

    def counted(value: str) -> list[str]:
        analysed.append(value)
        return text.tokenize(value)

    for module in (features, speakers, memory_index):
        monkeypatch.setattr(module, "tokenize", counted)
    speakers._name_terms.cache_clear()

    # When a retrieve gathers over memories and buffered turns, and ranks
    gathered = _gather(engine, question)

    # Then the question was analysed once (`Query.terms`), for the index's BM25, the buffered
    # turns' and the speakers
    assert analysed.count(question) == 1
    assert gathered.query.terms == tuple(text.tokenize(question))
    assert gathered.buffered


def _unit_sum(vectors: list[list[float]]) -> list[float]:
    total = [sum(parts) for parts in zip(*vectors, strict=True)]
    size = sum(value * value for value in total) ** 0.5
    return [value / size for value in total]


def test_a_buffered_turn_has_a_window_cosine_from_its_own_and_its_neighbours_vectors(engine: Engine) -> None:
    # Given d17-d20 buffered, and the query's and each turn's vector as the engine embeds them
    gathered = _gather(engine, "tortoise")
    turns = {turn.dialog_uuid: turn for turn in gathered.buffered.values()}
    vector = {
        dialog: engine.embedder.embed([turn_embedding_text(turn)], mode="passage")[0]
        for dialog, turn in turns.items()
    }
    query = engine.embedder.embed(["tortoise"], mode="query")[0]

    def cosine(dialogs: list[str]) -> float:
        return sum(a * b for a, b in zip(query, _unit_sum([vector[d] for d in dialogs]), strict=True))

    # When gathered / Then d18's window is d17-d19, and the last turn's only itself and d19
    window = {turn.key.rsplit(":", 1)[-1]: turn.window for turn in gathered.sources[1]}
    assert window["d18"] == pytest.approx(cosine(["d17", "d18", "d19"]))
    assert window["d20"] == pytest.approx(cosine(["d19", "d20"]))
    # and its candidate splits its cosine as a turn document's: window_share from the window
    share = engine.retrieval.window_share
    candidate = next(turn for turn in gathered.turns if turn.key.endswith(":d18"))
    assert candidate.features["window"] == pytest.approx(share * window["d18"])


def test_without_buffered_windows_a_buffered_turns_cosine_is_its_own_alone(engine: Engine) -> None:
    engine = replace(engine, retrieval=replace(engine.retrieval, buffered_windows=False))
    gathered = _gather(engine, "tortoise")

    assert all(turn.window is None for turn in gathered.sources[1])
    assert all(turn.features["window"] == 0.0 for turn in gathered.turns if turn.memory_id is None)


def _memory_parts(engine: Engine, query: str) -> list[tuple[float, float]]:
    """(score part, feature) of `memory` for each memory hit of an explained retrieve."""
    gathered = _gather(engine, query)
    feature = {memory.memory_id: memory.features["memory"] for memory in gathered.memories}
    request = RetrieveRequest.model_validate(
        {
            "parent_session_uuids": ["thread-1"],
            "user_input": {"query": query},
            "options": {"explain": True, "limit": 20},
        }
    )
    hits = retrieve.run(engine, TENANT, request).data
    return [
        (hit.score_parts["memory"], feature[hit.memory_id])
        for hit in hits
        if hit.kind == "memory" and hit.score_parts and feature.get(hit.memory_id)
    ]


def test_a_forming_memory_weight_weighs_memory_documents_while_turns_are_buffered(engine: Engine) -> None:
    # Given a thread with extracted memories and buffered turns, and a weight for that state
    engine = replace(engine, retrieval=replace(engine.retrieval, forming_memory_weight=0.1))
    # When a question finds both / Then each memory's document BM25 counts 0.1 of itself
    parts = _memory_parts(engine, "tortoise weather")
    assert parts and all(part == pytest.approx(0.1 * value, abs=1e-6) for part, value in parts)


def test_a_forming_memory_weight_leaves_a_drained_thread_at_the_shipped_weight(engine: Engine) -> None:
    # Given the same weight, and a thread with nothing buffered (a last turn closes its session)
    engine = replace(engine, retrieval=replace(engine.retrieval, forming_memory_weight=0.1))
    consolidate.run(
        engine,
        TENANT,
        ConsolidateRequest.model_validate(
            {
                "session_uuid": "s1",
                "parent_session_uuid": "thread-1",
                "new_dialog": {"uuid": "d21", "query": "the end of the day", "answer": ""},
                "options": {"force_summary": True},
            }
        ),
    )
    run_worker(engine)
    assert not _gather(engine, "tortoise").buffered
    # When asked / Then each memory's document BM25 counts the weights' own
    shipped = engine.retrieval.weights["memory"]
    parts = _memory_parts(engine, "tortoise weather")
    assert parts and all(part == pytest.approx(shipped * value, abs=1e-6) for part, value in parts)


def test_a_buffered_turn_takes_its_batchs_bm25_as_its_documents(engine: Engine) -> None:
    # d17-d20 are one run of the batch size (8): d18 and d19 name the tortoise, d17 and d20 do not
    gathered = _gather(engine, "tortoise")

    document = {
        turn.key.rsplit(":", 1)[-1]: turn.features["memory"]
        for turn in gathered.turns
        if turn.memory_id is None
    }
    # the run is the only one, so the best; d19 holds the pool's best BM25, so the side's share is 1
    assert document == {"d17": 1.0, "d18": 1.0, "d19": 1.0, "d20": 1.0}


def test_without_buffered_batches_a_buffered_turns_document_is_its_own_line(engine: Engine) -> None:
    engine = replace(engine, retrieval=replace(engine.retrieval, buffered_batches=False))
    gathered = _gather(engine, "tortoise")

    document = {
        turn.key.rsplit(":", 1)[-1]: turn.features["memory"]
        for turn in gathered.turns
        if turn.memory_id is None
    }
    assert document["d17"] == document["d20"] == 0.0
    assert document["d19"] == 1.0 and 0.0 < document["d18"] < 1.0
