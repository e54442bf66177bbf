"""How the harness turns hits into the protocol's ranking, and packs a turn ranking into a budget."""

from __future__ import annotations

from bench.quality.locomo.engine_run import Hit, expand
from bench.quality.locomo.tokens import within_budget


def test_a_memory_expands_to_its_matched_turns_first_then_the_rest_in_order() -> None:
    hits = [
        Hit("m1", "...", ("D1:1", "D1:2", "D1:3", "D1:4"), evidence=("D1:3", "D1:1")),
        Hit("D2:5", "...", ("D2:5",), evidence=("D2:5",)),
    ]

    assert expand(hits) == ["D1:3", "D1:1", "D1:2", "D1:4", "D2:5"]


def test_a_memory_cut_to_the_budget_stands_for_its_evidence_only() -> None:
    hits = [Hit("m1", "...", ("D1:1", "D1:2", "D1:3"), evidence=("D1:2",), truncated=True)]

    assert expand(hits) == ["D1:2"]


def test_a_hit_without_evidence_stands_for_its_turns_in_order() -> None:
    assert expand([Hit("m1", "...", ("D1:2", "D1:1"))]) == ["D1:2", "D1:1"]


def test_a_turn_ranking_in_a_budget_keeps_whole_turns_that_fit() -> None:
    texts = {"a": "one two three", "b": "four five six seven", "c": "eight"}

    assert within_budget(["a", "b", "c"], texts, 5) == ["a", "c"]
    assert within_budget(["a", "b", "c"], texts, 2) == ["c"]
