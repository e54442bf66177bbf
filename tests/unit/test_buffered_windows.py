"""A buffered turn's window cosine, taken in closed form from dots, equals the cosine of the
normalised sum of its and its session neighbours' vectors (the definition)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_engine.engine import VectorCache
from memory_engine.models.domain import Turn
from memory_engine.usecases.retrieve import _windows

_AT = datetime(2026, 1, 1, tzinfo=UTC)
_DIM = 6


def _turn(session: str, seq: int) -> Turn:
    return Turn(
        tenant="t",
        session_uuid=session,
        dialog_uuid=f"d{seq}",
        seq=seq,
        query="q",
        timestamp=_AT,
        created_at=_AT,
    )


def _by_definition(
    turns: dict[str, Turn], vectors: dict[str, list[float]], query: list[float]
) -> dict[str, float]:
    """The window as defined: neighbours by place in the session, those with a vector summed."""
    out: dict[str, float] = {}
    for session in {turn.session_uuid for turn in turns.values()}:
        keys = sorted(
            (key for key, turn in turns.items() if turn.session_uuid == session), key=lambda k: turns[k].seq
        )
        for place, key in enumerate(keys):
            if key not in vectors:
                continue
            near = [vectors[k] for k in keys[max(0, place - 1) : place + 2] if k in vectors]
            total = [sum(parts) for parts in zip(*near, strict=True)]
            size = math.sqrt(sum(value * value for value in total)) or 1.0
            out[key] = sum(a * b for a, b in zip(query, total, strict=True)) / size
    return out


_VECTOR = st.lists(st.floats(-1.0, 1.0, allow_nan=False), min_size=_DIM, max_size=_DIM)


@settings(max_examples=200, deadline=None)
@given(
    sessions=st.lists(st.integers(0, 7), min_size=1, max_size=3),
    data=st.data(),
    query=_VECTOR,
)
def test_the_closed_form_window_is_the_cosine_of_the_normalised_neighbour_sum(
    sessions: list[int], data: st.DataObject, query: list[float]
) -> None:
    # Given sessions of 0-7 buffered turns (seq not in arrival order), some without a vector yet
    turns: dict[str, Turn] = {}
    vectors: dict[str, list[float]] = {}
    for number, size in enumerate(sessions):
        seqs = data.draw(st.permutations(list(range(1, size + 1))))
        for seq in seqs:
            key = f"s{number}:{seq}"
            turns[key] = _turn(f"s{number}", seq)
            if data.draw(st.booleans()) or size == 1:
                vectors[key] = data.draw(_VECTOR)
    dense = {key: sum(a * b for a, b in zip(query, vector, strict=True)) for key, vector in vectors.items()}

    # When the windows are taken in closed form / Then each is the definition's, and only turns
    # with a vector have one
    got = _windows(turns, vectors, dense, VectorCache())
    expected = _by_definition(turns, vectors, query)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert math.isclose(got[key], value, rel_tol=1e-9, abs_tol=1e-9), key


class _Counted(VectorCache):
    def __init__(self) -> None:
        super().__init__()
        self.puts = 0

    def put(self, key: str, vector: list[float]) -> None:
        self.puts += 1
        super().put(key, vector)


def test_a_turns_neighbour_dots_are_taken_once_until_its_neighbourhood_changes() -> None:
    # Given a session of five buffered turns with vectors, windowed once
    turns = {f"k{seq}": _turn("s", seq) for seq in range(1, 6)}
    vectors = {key: [float(seq), 1.0, 0.5, 0.0, 0.0, 1.0] for seq, key in enumerate(turns, start=1)}
    query = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    dense = {key: vector[0] for key, vector in vectors.items()}
    cache = _Counted()
    first = _windows(turns, vectors, dense, cache)
    assert cache.puts == 5

    # When asked again, with another question / Then no dot is taken again, and the windows are
    # the new question's
    again = _windows(turns, vectors, {key: vector[1] for key, vector in vectors.items()}, cache)
    assert cache.puts == 5
    assert again == pytest.approx(_by_definition(turns, vectors, [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]))
    assert first == pytest.approx(_by_definition(turns, vectors, query))

    # When a sixth turn arrives / Then only the turns whose next two changed take theirs again
    turns["k6"] = _turn("s", 6)
    vectors["k6"] = [6.0, 1.0, 0.5, 0.0, 0.0, 1.0]
    dense["k6"] = 6.0
    assert _windows(turns, vectors, dense, cache) == pytest.approx(_by_definition(turns, vectors, query))
    assert cache.puts == 5 + 3  # k4 and k5 (new neighbours) and k6 itself
