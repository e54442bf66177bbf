"""The replays' own arithmetic: a unit's expansion, a memory cut in two, the size discount."""

from __future__ import annotations

from datetime import datetime

from bench.locomo.data import Question
from bench.locomo.replays import _near, event_dates, oracle, score, size_discounted, split, units
from bench.locomo.tune import Case
from memory_engine.retrieval.features import FoundTurn, Query, memory_candidates, turn_candidates
from memory_engine.usecases.retrieve import Gathered

SOURCES = ("D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6")


def _case(gold: tuple[str, ...] = ("D1:5",)) -> Case:
    # One memory of six turns whose fifth turn matches best, and one other memory of two turns.
    found = [
        FoundTurn("m1:4", "m1", dense=0.9, window=None, bm25=0.0, text="", said=None),
        FoundTurn("m1:1", "m1", dense=0.5, window=None, bm25=0.0, text="", said=None),
        FoundTurn("m2:0", "m2", dense=0.7, window=None, bm25=0.0, text="", said=None),
    ]
    question = Question("conv", 0, 4, "What did Ana plant?", gold, (1,))
    query = Query.read(question.question, datetime(2023, 5, 20))
    gathered = Gathered(
        query=query,
        memories=memory_candidates([("m1", 0.4, 0.0)]),
        sources=(found, []),
        turns=turn_candidates(found, query, 0.5),
        buffered={},
        lines={},
    )
    return Case(question, gathered, {"m1": SOURCES, "m2": ("D2:1", "D2:2")})


def test_a_unit_stands_for_its_matched_turns_best_first_then_its_sources() -> None:
    ranked = units(_case())

    assert ranked[0][1] == ["D1:5", "D1:2", *SOURCES]
    assert ranked[1][1] == ["D2:1", "D2:1", "D2:2"]


def test_a_memory_cut_in_two_keeps_its_document_score_in_each_part() -> None:
    whole = units(_case())[0][0]
    parts = split(_case(), lambda _, sources: len(sources) // 2)
    first = next(unit for unit in parts if unit[1][-1] == "D1:3")
    second = next(unit for unit in parts if unit[1][-1] == "D1:6")

    assert second[1][0] == "D1:5" and second[0] == whole
    assert first[1][0] == "D1:2" and first[0] < whole
    assert score([_case()], lambda c: split(c, lambda _, s: len(s) // 2))["R@5"] == 1.0


def test_the_size_discount_takes_more_from_a_unit_that_fills_more_places() -> None:
    plain = {tuple(dialogs): s for s, dialogs in units(_case())}
    discounted = {tuple(dialogs): s for s, dialogs in size_discounted(_case(), 0.07)}
    gaps = {len(set(key)): plain[key] - discounted[key] for key in plain}

    assert round(gaps[6], 6) == 0.05 and round(gaps[2], 6) == 0.01


def test_near_means_the_same_session_and_at_most_three_turns_apart() -> None:
    assert _near("D3:4", "D3:7") and not _near("D3:4", "D3:8") and not _near("D3:4", "D2:4")


def test_a_turn_names_the_days_its_relative_words_mean_when_it_was_said() -> None:
    said = datetime(2022, 5, 2, 13, 0)  # a Monday

    assert event_dates("I watched it last night!", said) == [datetime(2022, 5, 1)]
    assert event_dates("Last weekend I ran a 5K.", said) == [datetime(2022, 4, 30), datetime(2022, 5, 1)]
    assert event_dates("We went to a convention last month.", said) == [datetime(2022, 4, 1)]
    assert event_dates("Nothing dated here.", said) == []


def test_the_oracle_puts_the_unit_holding_gold_first() -> None:
    case = _case(gold=("D2:2",))

    assert score([case], units)["R@5"] == 0.0
    assert score([case], oracle)["R@5"] == 1.0
