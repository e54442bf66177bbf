"""Fusion: memories ranked by their best turn plus their own document, against raw buffered turns."""

from __future__ import annotations

import pytest

from memory_engine.retrieval.features import MEMORY_FEATURES, TURN_FEATURES, MemoryCandidate, TurnCandidate
from memory_engine.retrieval.fusion import rank, with_lexical_share


def weights(**given: float) -> dict[str, float]:
    """Every feature at 0 but those given (`handicap` too)."""
    return {name: 0.0 for name in (*TURN_FEATURES, *MEMORY_FEATURES, "handicap")} | given


def turn(owner: str | None, key: str = "", **features: float) -> TurnCandidate:
    """A memory's turn (`owner` the memory id) or, with `owner` None, a buffered turn named `key`."""
    return TurnCandidate(
        key or f"{owner}:0", owner, {name: features.get(name, 0.0) for name in TURN_FEATURES}
    )


def memory(memory_id: str, lexical: float = 0.0, dense: float = 0.0) -> MemoryCandidate:
    return MemoryCandidate(memory_id, {"memory": lexical, "memory_dense": dense})


PLAIN = weights(dense=0.5, window=0.5, lexical=0.5)


def test_a_memory_scores_as_its_best_turn() -> None:
    # Given a memory with a weak and a strong turn, and another memory with a middling one
    turns = [turn("m1", "m1:0", dense=0.1, lexical=0.25), turn("m1", "m1:1", dense=0.9, lexical=1.0)]
    turns.append(turn("m2", dense=0.5, lexical=0.5))

    ranked = rank([], turns, PLAIN)

    # Then m1 ranks first with its strong turn's score: 0.5 * 0.9 + 0.5 * 1.0
    assert [(unit.key, unit.score) for unit in ranked] == [("m1", pytest.approx(0.95)), ("m2", 0.5)]
    assert ranked[0].turns == (("m1:1", 0.95), ("m1:0", 0.175))


def test_a_buffered_turn_is_a_unit_of_its_own_with_no_memory_id() -> None:
    ranked = rank([], [turn(None, "turn:s1:d9", dense=0.4)], PLAIN)

    assert [(unit.key, unit.memory_id) for unit in ranked] == [("turn:s1:d9", None)]
    assert ranked[0].turns == (("turn:s1:d9", 0.2),)


def test_a_memorys_own_document_adds_to_its_best_turn() -> None:
    # Given two memories with equal turns, one whose memory document matches the words better
    turns = [turn("m1", dense=0.5, lexical=1.0), turn("m2", dense=0.5, lexical=1.0)]
    memories = [memory("m1", lexical=0.25), memory("m2", lexical=1.0)]

    ranked = rank(memories, turns, PLAIN | {"memory": 0.4})

    # Then the better memory document decides: m2 gets 0.4 * 1.0, m1 0.4 * 0.25
    assert [(unit.key, unit.score) for unit in ranked] == [("m2", 1.15), ("m1", 0.85)]


def test_the_handicap_lets_a_raw_turn_beat_a_memory_with_an_equal_turn() -> None:
    # Given a memory and a buffered turn with identical turn features
    turns = [turn("m1", dense=0.6, lexical=1.0), turn(None, "turn:s:d9", dense=0.6, lexical=1.0)]

    ranked = rank([], turns, PLAIN | {"handicap": 0.1})

    # Then the single turn (one place in the ranking) comes before the memory (a whole batch)
    assert [unit.key for unit in ranked] == ["turn:s:d9", "m1"]
    assert ranked[1].parts["handicap"] == -0.1


def test_a_memory_found_only_by_its_own_document_still_ranks() -> None:
    ranked = rank(
        [memory("m1", lexical=1.0, dense=0.6)], [], weights(memory=0.4, memory_dense=0.5, handicap=0.1)
    )

    assert [(unit.key, unit.memory_id, unit.score) for unit in ranked] == [("m1", "m1", pytest.approx(0.6))]
    assert ranked[0].turns == ()


def test_no_candidates_rank_nothing() -> None:
    assert rank([], [], weights()) == []


def test_each_part_is_the_weight_times_the_feature_of_its_name_and_the_score_is_their_sum() -> None:
    # Given a memory's turn and document with every feature set, and a weight for each
    features = {name: 0.1 * (n + 1) for n, name in enumerate(TURN_FEATURES)}
    given = {name: 0.05 * (n + 1) for n, name in enumerate((*TURN_FEATURES, *MEMORY_FEATURES, "handicap"))}

    [unit] = rank([memory("m1", lexical=0.7, dense=0.3)], [TurnCandidate("m1:0", "m1", features)], given)

    # Then every part is w[f] * x[f] (the handicap: -w), and the score adds them up
    expected = {name: given[name] * value for name, value in features.items()}
    expected |= {"handicap": -given["handicap"], "memory": given["memory"] * 0.7}
    expected["memory_dense"] = given["memory_dense"] * 0.3
    assert unit.parts == pytest.approx(expected)
    assert unit.score == round(sum(unit.parts.values()), 6)


def test_the_named_speakers_turn_comes_first_by_the_speaker_weight() -> None:
    # Given two memories whose best turns score alike, one said by the person the question names
    turns = [turn("m1", dense=0.80, lexical=1.0), turn("m2", dense=0.79, lexical=1.0, speaker=1.0)]

    ranked = rank([], turns, PLAIN | {"speaker": 0.05})

    # Then the named speaker's memory comes first: 0.5 * 0.79 + 0.5 + 0.05 against 0.5 * 0.8 + 0.5
    assert [(unit.key, unit.score) for unit in ranked] == [("m2", 0.945), ("m1", 0.9)]
    assert [unit.key for unit in rank([], turns, PLAIN)] == ["m1", "m2"]


def test_a_lexical_share_of_zero_ranks_by_the_cosines_alone() -> None:
    # Given a turn that only BM25 likes and one that only the embedder likes, and memory documents
    # that BM25 orders the other way
    turns = [turn("bm25", dense=0.70, lexical=1.0), turn("dense", dense=0.80)]
    memories = [memory("bm25", lexical=1.0), memory("dense", lexical=0.1)]
    given = PLAIN | {"memory": 0.5}

    # When the lexical terms are scaled to nothing
    ranked = rank(memories, turns, with_lexical_share(given, 0.0))

    # Then the cosine decides, all of the turn's weight on it, and nothing lexical is left
    assert [(unit.key, unit.score) for unit in ranked] == [("dense", 0.8), ("bm25", 0.7)]
    assert rank(memories, turns, given)[0].key == "bm25"


def test_a_lexical_share_scales_the_lexical_weights_and_gives_the_turns_share_to_its_cosine() -> None:
    given = weights(dense=0.8, window=0.8, lexical=0.2, speaker=0.05, memory=0.5, memory_dense=0.25, date=0.1)

    half = with_lexical_share(given, 0.5)

    assert half == pytest.approx(
        given | {"dense": 0.9, "window": 0.9, "lexical": 0.1, "speaker": 0.025, "memory": 0.25}
    )
    assert with_lexical_share(given, 1.0) == given
