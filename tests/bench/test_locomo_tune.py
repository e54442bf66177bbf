"""The tuning grid speaks the engine's weight names and rebuilds turns for each window share."""

from __future__ import annotations

from datetime import datetime

import pytest

from bench.quality.locomo.data import Question
from bench.quality.locomo.tune import GRID, Case, weights_of
from memory_engine.retrieval.config import DEFAULT_WEIGHTS, DEFAULT_WINDOW_SHARE
from memory_engine.retrieval.features import FoundTurn, Query, memory_candidates, turn_candidates
from memory_engine.usecases.retrieve import Gathered

SHIPPED = {"dense": 0.95, "window_share": 0.5, "date": 0.1, "speaker": 0.05, "memory": 0.25}
SHIPPED |= {"memory_dense": 0.25, "handicap": 0.0}


def _case() -> Case:
    # One memory of two turns (the first matches best) and one other memory of one turn.
    found = [
        FoundTurn("m1:4", "m1", dense=0.9, window=None, bm25=0.0, text="", said=None),
        FoundTurn("m1:1", "m1", dense=0.5, window=None, bm25=0.0, text="", said=None),
        FoundTurn("m2:0", "m2", dense=0.7, window=None, bm25=0.0, text="", said=None),
    ]
    question = Question("conv", 0, 4, "What did Ana plant?", ("D1:5",), (1,))
    query = Query.read(question.question, datetime(2023, 5, 20))
    gathered = Gathered(
        query=query,
        limit=5,
        excluded=set(),
        memories=memory_candidates([("m1", 0.4, 0.0)]),
        sources=(found, []),
        scales=(None, None),
        turns=turn_candidates(found, query, 0.5),
        buffered={},
        lines={},
    )
    return Case(question, gathered, {"m1": ("D1:2", "D1:5"), "m2": ("D2:1",)})


def test_the_shipped_point_of_the_grid_is_the_default_weights_and_window_share() -> None:
    assert set(SHIPPED) == set(GRID)
    assert all(SHIPPED[name] in values for name, values in GRID.items())

    assert weights_of(SHIPPED) == pytest.approx(DEFAULT_WEIGHTS)
    assert SHIPPED["window_share"] == DEFAULT_WINDOW_SHARE


def test_a_case_builds_its_turns_again_with_another_window_share() -> None:
    case = _case()
    windowed = [found._replace(window=0.1) for found in case.gathered.sources[0]]
    case.gathered.sources[0][:] = windowed

    halves = case.turns(0.5)
    alone = case.turns(0.0)

    assert [turn.features["window"] for turn in halves] == pytest.approx([0.05, 0.05, 0.05])
    assert [turn.features["dense"] for turn in alone] == [0.9, 0.5, 0.7]
    assert [turn.features["window"] for turn in alone] == [0.0, 0.0, 0.0]
