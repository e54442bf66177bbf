"""Cutting gathered evidence to fewer candidates keeps what the index would hand over at that count."""

from __future__ import annotations

from datetime import datetime

from bench.experiments.candidate_counts import cut, kept_turns
from bench.quality.locomo.data import Question
from bench.quality.locomo.tune import Case
from memory_engine.retrieval.features import FoundTurn, Query, memory_candidates, turn_candidates
from memory_engine.usecases.retrieve import Gathered


def _turn(key: str, dense: float, bm25: float, memory_id: str | None = "m1") -> FoundTurn:
    return FoundTurn(key, memory_id, dense=dense, window=None, bm25=bm25, text="", said=None)


def test_the_index_hands_over_the_best_by_cosine_and_the_best_by_bm25() -> None:
    # Given four indexed turns, two strong by cosine and one by words only
    indexed = [_turn("a", 0.9, 0.0), _turn("b", 0.8, 0.0), _turn("c", 0.1, 7.0), _turn("d", 0.2, 0.0)]

    # When the index hands over one of each
    kept = kept_turns(indexed, 1)

    # Then the best cosine and the best BM25 stay; a turn sharing no word is no BM25 candidate
    assert kept == {"a", "c"}
    assert kept_turns(indexed, 2) == {"a", "b", "c"}


def test_a_cut_case_keeps_its_buffered_turns_and_its_best_memories() -> None:
    # Given a case with three indexed turns, one buffered turn and three memory documents
    indexed = [_turn("m1:0", 0.9, 0.0), _turn("m2:0", 0.5, 0.0), _turn("m3:0", 0.4, 0.0)]
    buffered = [_turn("turn:s:d9", 0.1, 0.0, memory_id=None)]
    query = Query.read("What did Ana plant?", datetime(2023, 5, 20))
    gathered = Gathered(
        query=query,
        limit=5,
        excluded=set(),
        memories=memory_candidates([("m1", 0.4, 0.0), ("m2", 0.3, 2.0), ("m3", 0.1, 0.0)]),
        sources=(indexed, buffered),
        scales=(None, None),
        turns=turn_candidates(indexed, query, 0.5) + turn_candidates(buffered, query, 0.5),
        buffered={},
        lines={},
    )
    case = Case(Question("conv", 0, 4, "What did Ana plant?", ("D1:5",), (1,)), gathered, {})

    # When it is cut to one candidate per retriever
    smaller = cut(case, turns=1, memories=1).gathered

    # Then the best turn by cosine stays beside the buffered one, and the best memory by each score
    assert [turn.key for turn in smaller.turns] == ["m1:0", "turn:s:d9"]
    assert [memory.memory_id for memory in smaller.memories] == ["m1", "m2"]
