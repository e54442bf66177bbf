"""The cost estimate prices OpenSearch from the history kept (vectors in RAM), not from traffic."""

from __future__ import annotations

from dataclasses import replace

from bench.cost_estimate import LARGE, SMALL, month, search_ocus

SERVERLESS = "OpenSearch Serverless (search OCUs from the graphs' RAM)"
TOTAL = "total, Serverless, built-in extraction"


def test_keeping_more_history_costs_search_capacity_and_not_lambda_time() -> None:
    # Given the same traffic, a hundred times the turns kept
    deeper = replace(SMALL, retained_turns=SMALL.retained_turns * 100)
    small, kept = month(SMALL, 0.15, 0.6), month(deeper, 0.15, 0.6)
    # Then the search capacity grows and the functions cost the same
    assert search_ocus(deeper) > search_ocus(SMALL)
    assert kept[SERVERLESS] > small[SERVERLESS]
    assert kept["Lambda: embedding image"] == small["Lambda: embedding image"]


def test_a_small_history_sits_at_serverless_floor_of_half_an_ocu_per_copy() -> None:
    assert search_ocus(SMALL) == 1.0
    assert search_ocus(LARGE) > 10


def test_the_total_is_the_sum_of_its_parts() -> None:
    costs = month(LARGE, 0.15, 0.6)
    parts = list(costs)[: list(costs).index(TOTAL)]
    assert abs(sum(costs[part] for part in parts) - costs[TOTAL]) < 1e-6
