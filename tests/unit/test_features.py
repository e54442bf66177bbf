"""Ranking features: one record per candidate turn, built by one function for every source."""

from __future__ import annotations

from datetime import datetime

import pytest

from memory_engine.retrieval.config import DEFAULT_WEIGHTS
from memory_engine.retrieval.features import (
    QUERY_SCORERS,
    TURN_FEATURES,
    FoundTurn,
    Query,
    memory_candidates,
    memory_lexical_share,
    turn_candidates,
)
from memory_engine.retrieval.fusion import rank

NOW = datetime(2023, 5, 20, 12, 0)


def found(key: str = "m1:0", **given: object) -> FoundTurn:
    values: dict[str, object] = {"memory_id": "m1", "dense": 0.5, "window": None, "bm25": 0.0}
    values |= {"text": "Ana: I planted tomatoes", "said": None} | given
    return FoundTurn(key=key, **values)  # type: ignore[arg-type]


def test_bm25_is_divided_by_the_best_of_the_turns_built_together() -> None:
    turns = turn_candidates(
        [found("m1:0", bm25=8.0), found("m1:1", bm25=2.0)], Query.read("tomatoes", NOW), 0.5
    )

    assert [turn.features["lexical"] for turn in turns] == [1.0, 0.25]


def test_a_source_with_no_bm25_match_gets_no_lexical_feature() -> None:
    turns = turn_candidates([found(bm25=0.0)], Query.read("tomatoes", NOW), 0.5)

    assert turns[0].features["lexical"] == 0.0


def test_a_windowed_turns_cosine_is_split_by_the_window_share() -> None:
    [turn] = turn_candidates([found(dense=0.8, window=0.6)], Query.read("tomatoes", NOW), 0.25)

    assert turn.features["dense"] == pytest.approx(0.75 * 0.8)
    assert turn.features["window"] == pytest.approx(0.25 * 0.6)


def test_a_turn_without_a_window_vector_keeps_its_whole_cosine() -> None:
    [turn] = turn_candidates([found("turn:s:d1", memory_id=None, dense=0.8)], Query.read("x", NOW), 0.25)

    assert (turn.features["dense"], turn.features["window"]) == (0.8, 0.0)
    assert (turn.owner, turn.memory_id) == ("turn:s:d1", None)


def test_a_turn_said_on_the_date_the_question_names_gets_the_date_feature() -> None:
    query = Query.read("What did Ana plant on 8 May 2023?", NOW)
    days = [datetime(2023, 5, 8, 9), datetime(2023, 5, 2, 9), datetime(2023, 6, 8, 9)]

    turns = turn_candidates([found(f"m1:{n}", said=day) for n, day in enumerate(days)], query, 0.5)

    assert [turn.features["date"] for turn in turns] == [1.0, 0.5, 0.0]


def test_a_turn_whose_speaker_the_question_names_gets_the_speaker_feature() -> None:
    query = Query.read("What did Ana plant?", NOW)

    turns = turn_candidates([found(text="Ana: tomatoes"), found(text="Ben: Ana planted beans")], query, 0.5)

    assert [turn.features["speaker"] for turn in turns] == [1.0, 0.0]


def test_every_turn_candidate_has_exactly_the_turn_features() -> None:
    [turn] = turn_candidates([found()], Query.read("x", NOW), 0.5)

    assert tuple(turn.features) == TURN_FEATURES
    assert set(QUERY_SCORERS) <= set(TURN_FEATURES)


def test_a_memory_documents_bm25_is_divided_by_the_best_and_a_negative_cosine_counts_none() -> None:
    memories = memory_candidates([("m1", -0.2, 6.0), ("m2", 0.4, 3.0)])

    assert [(m.memory_id, dict(m.features)) for m in memories] == [
        ("m1", {"memory": 1.0, "memory_dense": 0.0}),
        ("m2", {"memory": 0.5, "memory_dense": 0.4}),
    ]


def test_memory_documents_bm25_counts_the_memory_sides_share_of_the_best() -> None:
    memories = memory_candidates([("m1", 0.3, 6.0), ("m2", 0.3, 3.0)], share=0.4)

    assert [m.features["memory"] for m in memories] == pytest.approx([0.4, 0.2])


def test_the_memory_sides_share_is_its_best_turn_over_the_pools_best() -> None:
    pooled = {"indexed:m1:0": 2.0, "indexed:m2:3": 1.0, "turn:s:d9": 5.0}

    assert memory_lexical_share(pooled, ["indexed:m1:0", "indexed:m2:3"]) == pytest.approx(0.4)
    # nothing to compare with: no indexed turn, or no word of the question matched anywhere
    assert memory_lexical_share(pooled, []) == 1.0
    assert memory_lexical_share({"indexed:m1:0": 0.0, "turn:s:d9": 0.0}, ["indexed:m1:0"]) == 1.0


def test_a_new_query_side_feature_is_a_scorer_and_a_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given one more scorer (a question about plants favours a line that names one) and its weight
    monkeypatch.setitem(QUERY_SCORERS, "plant", lambda query, turn: float("tomatoes" in turn.text))
    query = Query.read("What did Ana plant?", NOW)

    turns = turn_candidates(
        [found("m1:0"), found("m2:0", memory_id="m2", text="Ana: I went out")], query, 0.5
    )
    ranked = rank([], turns, DEFAULT_WEIGHTS | {"plant": 0.2})

    # Then its part shows by its name and counts in the score, which still adds up
    assert [(unit.key, unit.parts["plant"]) for unit in ranked] == [("m1", 0.2), ("m2", 0.0)]
    assert all(unit.score == round(sum(unit.parts.values()), 6) for unit in ranked)
