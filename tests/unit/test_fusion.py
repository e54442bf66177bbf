"""Fusion: memories ranked by their best turn plus their own document, against raw buffered turns."""

from __future__ import annotations

import pytest

from memory_engine.retrieval.fusion import FusionWeights, MemoryEvidence, TurnEvidence, fuse

PLAIN = FusionWeights(turn_dense=0.5, memory_lexical=0.0, memory_dense=0.0, memory_handicap=0.0)


def test_a_memory_scores_as_its_best_turn() -> None:
    # Given a memory with a weak and a strong turn, and another memory with a middling one
    turns = [TurnEvidence("m1", 0.1, 1.0), TurnEvidence("m1", 0.9, 4.0), TurnEvidence("m2", 0.5, 2.0)]

    ranked = fuse([], turns, PLAIN, {"m1", "m2"})

    # Then m1 ranks first with its strong turn's score: 0.5 * 0.9 + 0.5 * 4/4
    assert ranked[0] == ("m1", pytest.approx(0.95))
    assert [key for key, _ in ranked] == ["m1", "m2"]


def test_lexical_scores_are_divided_by_the_best_turn_score_of_the_query() -> None:
    turns = [TurnEvidence("m1", 0.0, 10.0), TurnEvidence("buffered", 0.0, 5.0)]

    scores = dict(fuse([], turns, PLAIN, {"m1"}))

    assert scores == {"m1": pytest.approx(0.5), "buffered": pytest.approx(0.25)}


def test_a_memorys_own_document_adds_to_its_best_turn() -> None:
    # Given two memories with equal turns, one whose memory document matches the words better
    turns = [TurnEvidence("m1", 0.5, 1.0), TurnEvidence("m2", 0.5, 1.0)]
    memories = [MemoryEvidence("m1", 0.2, 2.0), MemoryEvidence("m2", 0.2, 8.0)]
    weights = FusionWeights(turn_dense=0.5, memory_lexical=0.4, memory_dense=0.0, memory_handicap=0.0)

    ranked = fuse(memories, turns, weights, {"m1", "m2"})

    # Then the better memory document decides: m2 gets 0.4 * 8/8, m1 0.4 * 2/8
    assert ranked == [("m2", pytest.approx(1.15)), ("m1", pytest.approx(0.85))]


def test_the_handicap_lets_a_raw_turn_beat_a_memory_with_an_equal_turn() -> None:
    # Given a memory and a buffered turn with identical turn evidence
    turns = [TurnEvidence("m1", 0.6, 3.0), TurnEvidence("turn:s:d9", 0.6, 3.0)]
    weights = FusionWeights(turn_dense=0.5, memory_lexical=0.0, memory_dense=0.0, memory_handicap=0.1)

    ranked = fuse([], turns, weights, {"m1"})

    # Then the single turn (one place in the ranking) comes before the memory (a whole batch)
    assert [key for key, _ in ranked] == ["turn:s:d9", "m1"]


def test_a_memory_found_only_by_its_own_document_still_ranks() -> None:
    weights = FusionWeights(turn_dense=0.5, memory_lexical=0.4, memory_dense=0.5, memory_handicap=0.1)

    ranked = fuse([MemoryEvidence("m1", 0.6, 3.0)], [], weights, {"m1"})

    assert ranked == [("m1", pytest.approx(0.4 + 0.3 - 0.1))]


def test_no_evidence_ranks_nothing() -> None:
    assert fuse([], [], FusionWeights(), set()) == []


def test_a_turn_said_on_the_date_the_query_names_gets_the_date_bonus() -> None:
    # Given two buffered turns with equal scores, one said on the named date, one in its month
    turns = [TurnEvidence("turn:a", 0.5, 1.0, on_date=0.0), TurnEvidence("turn:b", 0.5, 1.0, on_date=1.0)]
    turns.append(TurnEvidence("turn:c", 0.5, 1.0, on_date=0.5))
    weights = FusionWeights(turn_dense=0.5, turn_date=0.2, memory_lexical=0.0, memory_handicap=0.0)

    ranked = fuse([], turns, weights, set())

    # Then the bonus orders them: 0.75 + 0.2, 0.75 + 0.1, 0.75
    assert ranked == [
        ("turn:b", pytest.approx(0.95)),
        ("turn:c", pytest.approx(0.85)),
        ("turn:a", pytest.approx(0.75)),
    ]


def test_a_lexical_share_of_zero_ranks_by_the_cosines_alone() -> None:
    # Given a turn that only BM25 likes and one that only the embedder likes, and memory documents
    # that BM25 orders the other way
    turns = [TurnEvidence("bm25", 0.70, 9.0), TurnEvidence("dense", 0.80, 0.0)]
    memories = [MemoryEvidence("bm25", 0.8, 9.0), MemoryEvidence("dense", 0.8, 1.0)]
    weights = FusionWeights(turn_dense=0.5, memory_lexical=0.5, memory_dense=0.0, memory_handicap=0.0)

    # When the lexical terms are scaled to nothing
    ranked = fuse(memories, turns, weights.with_lexical_share(0.0), {"bm25", "dense"})

    # Then the cosine decides, and nothing lexical is left in the scores
    assert ranked == [("dense", pytest.approx(0.80)), ("bm25", pytest.approx(0.70))]
    assert fuse(memories, turns, weights, {"bm25", "dense"})[0][0] == "bm25"


def test_a_lexical_share_scales_both_lexical_weights_and_one_changes_nothing() -> None:
    weights = FusionWeights(turn_dense=0.8, memory_lexical=0.5, memory_dense=0.25, memory_handicap=0.1)

    half = weights.with_lexical_share(0.5)

    assert (half.turn_dense, half.memory_lexical) == (pytest.approx(0.9), pytest.approx(0.25))
    assert (half.memory_dense, half.memory_handicap, half.turn_date) == (0.25, 0.1, weights.turn_date)
    assert weights.with_lexical_share(1.0) == weights


def test_a_turn_whose_speaker_the_query_names_gets_the_speaker_bonus() -> None:
    # Given two memories whose best turns score alike, one said by the person the question names
    turns = [TurnEvidence("m1", 0.80, 1.0, key="m1:0"), TurnEvidence("m2", 0.79, 1.0, key="m2:0", named=1.0)]
    weights = FusionWeights(turn_dense=0.5, turn_speaker=0.05, memory_lexical=0.0, memory_handicap=0.0)

    ranked = fuse([], turns, weights, {"m1", "m2"})

    # Then the named speaker's memory comes first: 0.5 * 0.79 + 0.5 + 0.05 against 0.5 * 0.8 + 0.5
    assert ranked == [("m2", pytest.approx(0.945)), ("m1", pytest.approx(0.9))]
    assert [key for key, _ in fuse([], turns, PLAIN, {"m1", "m2"})] == ["m1", "m2"]


def test_the_speaker_bonus_is_a_lexical_term_that_the_lexical_share_scales() -> None:
    weights = FusionWeights(turn_speaker=0.05)

    assert weights.with_lexical_share(0.0).turn_speaker == 0.0
    assert weights.with_lexical_share(0.5).turn_speaker == pytest.approx(0.025)
