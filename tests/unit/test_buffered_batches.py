"""A buffered turn's batch as its document (`retrieval.batches`): the runs extraction will cut, each
scored as one document, on the memory documents' scale."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_engine.models.domain import Turn
from memory_engine.retrieval import batches
from memory_engine.retrieval.bm25 import TermCounts
from memory_engine.retrieval.features import AnalysedText, Query

NOW = datetime(2026, 12, 7, tzinfo=UTC)


def _turns(session: str, lines: list[str]) -> dict[str, Turn]:
    return {
        f"{session}:{seq}": Turn(
            tenant="t",
            session_uuid=session,
            dialog_uuid=f"{session}-{seq}",
            seq=seq,
            query=line,
            timestamp=NOW,
            created_at=NOW,
        )
        for seq, line in enumerate(lines)
    }


def _read(turns: dict[str, Turn]) -> dict[str, AnalysedText]:
    return {key: AnalysedText.read(turn.query, turn.query) for key, turn in turns.items()}


def test_each_sessions_buffered_turns_are_cut_into_runs_from_the_oldest_and_share_their_runs_score() -> None:
    # Given session a's five turns (runs of 2: a0-a1, a2-a3, a4) and session b's two (one run)
    turns = {
        **_turns("a", ["hello", "the kayak trip", "hello", "hello", "kayak kayak kayak"]),
        **_turns("b", ["hello", "hello"]),
    }

    found = batches.documents(turns, _read(turns), Query.read("kayak", NOW), size=2, share=1.0)

    # Then a turn of a run that names the kayak scores with its run, one that names nothing 0
    assert found["a:0"] == found["a:1"] > 0.0
    assert found["a:4"] == 1.0  # the best run
    assert found["a:2"] == found["a:3"] == found["b:0"] == found["b:1"] == 0.0


def test_the_runs_scores_are_multiplied_by_the_share_and_a_turn_not_analysed_takes_its_runs() -> None:
    turns = _turns("a", ["the kayak trip", "a long story nobody analysed"])
    read = _read(turns)
    del read["a:1"]  # past the request's analysis budget

    found = batches.documents(turns, read, Query.read("kayak", NOW), size=8, share=0.25)

    assert found == {"a:0": 0.25, "a:1": 0.25}


def test_the_buffered_sides_share_is_its_best_turn_over_the_pools_best() -> None:
    turns = _turns("a", ["x", "y"])
    pooled = {"a:0": 2.0, "a:1": 1.0, "indexed:m1:0": 4.0}

    assert batches.side_share(pooled, turns, 4.0) == pytest.approx(0.5)
    assert batches.side_share(pooled, turns, None) == 1.0  # nothing matched anywhere


def test_term_counts_joined_are_one_document_of_every_parts_terms() -> None:
    joined = TermCounts.joined([TermCounts.of(["kayak", "trip"]), TermCounts.of(["kayak"])])

    assert joined == TermCounts({"kayak": 2, "trip": 1}, 3)
