"""The benchmark's metric code on tiny hand-made rankings (not the benchmark's figures)."""

from __future__ import annotations

import math

import pytest

from bench.quality.locomo.metrics import (
    by_category,
    ndcg_at,
    recall_at,
    reciprocal_rank,
    score,
    session_recall_at,
)


def test_a_perfect_ranking_scores_one_everywhere() -> None:
    # Given the two gold turns ranked first
    ranked, gold = ["D1:2", "D3:4", "D2:1"], ["D1:2", "D3:4"]

    # Then recall, NDCG and MRR are all 1
    assert recall_at(ranked, gold, 5) == 1.0
    assert ndcg_at(ranked, gold, 10) == pytest.approx(1.0)
    assert reciprocal_rank(ranked, gold) == 1.0


def test_an_empty_ranking_scores_zero_everywhere() -> None:
    gold = ["D1:2"]

    assert recall_at([], gold, 10) == 0.0
    assert ndcg_at([], gold, 10) == 0.0
    assert reciprocal_rank([], gold) == 0.0
    assert session_recall_at([], [1], 5) == 0.0


def test_ndcg_of_a_gold_turn_in_second_place_is_one_over_log2_of_three() -> None:
    # Given one gold turn, ranked second
    value = ndcg_at(["D1:1", "D1:2"], ["D1:2"], 10)

    # Then DCG = 1/log2(3) and the ideal DCG is 1
    assert value == pytest.approx(1 / math.log2(3))


def test_ndcg_with_two_gold_turns_and_one_found_third() -> None:
    # Given two gold turns, only one ranked, in third place
    value = ndcg_at(["D1:1", "D1:2", "D1:3"], ["D1:3", "D9:9"], 10)

    # Then DCG = 1/log2(4) = 0.5 over the ideal 1 + 1/log2(3)
    assert value == pytest.approx(0.5 / (1 + 1 / math.log2(3)))


def test_recall_counts_only_the_first_k() -> None:
    ranked = ["D1:1", "D1:2", "D1:3"]

    assert recall_at(ranked, ["D1:3", "D2:1"], 2) == 0.0
    assert recall_at(ranked, ["D1:3", "D2:1"], 3) == 0.5


def test_mrr_is_the_inverse_rank_of_the_first_gold_turn() -> None:
    assert reciprocal_rank(["D1:1", "D1:2", "D1:3", "D1:4"], ["D1:4", "D1:3"]) == pytest.approx(1 / 3)


def test_session_recall_collapses_the_ranking_to_sessions() -> None:
    # Given turns of sessions 1, 1, 2, 3, 4, 5, 6 in that order
    ranked = ["D1:1", "D1:2", "D2:1", "D3:1", "D4:1", "D5:1", "D6:1"]

    # Then the first five sessions are 1-5: session 6 is out, session 5 is in
    assert session_recall_at(ranked, [5, 6], 5) == 0.5


def test_the_headline_leaves_category_5_out_but_reports_it() -> None:
    # Given a perfect answer in category 4 and a miss in category 5
    hit = score(["D1:1"], ["D1:1"], [1], category=4, tokens=10)
    miss = score(["D1:2"], ["D1:1"], [1], category=5, tokens=30)

    # When summarised
    summaries = by_category([hit, miss])

    # Then the headline is the category-4 question alone, and category 5 has its own entry
    assert summaries["all"].questions == 1
    assert summaries["all"].means["recall_10"] == 1.0
    assert summaries["5"].means["recall_10"] == 0.0
    assert summaries["all"].curve[0] == 1.0
