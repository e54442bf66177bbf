"""Candidate recall counts the turns the candidates are, not the turns a memory document stands for."""

from __future__ import annotations

from datetime import datetime

from bench.experiments.candidate_recall import candidate_dialogs
from bench.quality.locomo.data import Question
from bench.quality.locomo.tune import Case
from memory_engine.models.domain import Turn
from memory_engine.retrieval.features import FoundTurn, Query, memory_candidates, turn_candidates
from memory_engine.usecases.retrieve import Gathered


def _turn(key: str, memory_id: str | None) -> FoundTurn:
    return FoundTurn(key, memory_id, dense=0.5, window=None, bm25=0.0, text="", said=None)


def test_a_case_stands_for_its_indexed_and_buffered_turns_and_not_its_memories_other_turns() -> None:
    # Given a memory of three turns with its second turn a candidate, a second memory found by its
    # own document only, and one buffered turn
    indexed = [_turn("m1:1", "m1")]
    buffered = [_turn("turn:s:b", None)]
    query = Query.read("What did Ana plant?", datetime(2023, 5, 20))
    gathered = Gathered(
        query=query,
        limit=5,
        excluded=set(),
        memories=memory_candidates([("m2", 0.4, 0.0)]),
        sources=(indexed, buffered),
        scales=(None, None),
        turns=turn_candidates(indexed, query, 0.5) + turn_candidates(buffered, query, 0.5),
        buffered={"turn:s:b": _buffered("D3:1")},
        lines={},
    )
    dialogs = {"m1": ("D1:1", "D1:2", "D1:3"), "m2": ("D2:1", "D2:2")}
    case = Case(Question("conv", 0, 1, "What did Ana plant?", ("D1:2",), (1,)), gathered, dialogs)

    # When its candidates' dialogs are listed
    found = candidate_dialogs(case)

    # Then they are the indexed turn at its position and the buffered turn, nothing of m2's
    assert found == {"D1:2", "D3:1"}


def _buffered(dialog_uuid: str) -> Turn:
    when = datetime(2023, 5, 20)
    return Turn(
        tenant="t",
        session_uuid="s",
        dialog_uuid=dialog_uuid,
        seq=1,
        query="",
        timestamp=when,
        created_at=when,
    )
