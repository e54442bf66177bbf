"""Memory ids sort in the order the memories were made, within one second too (the inspector and
`GET /v1/inspect/memories` list a thread's memories in id order)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.domain import is_memory_id, new_memory_id
from memory_engine.usecases import consolidate
from tests.fakes.engine import fake_engine, run_worker
from tests.fakes.ports import StepClock

INSTANT = datetime(2026, 3, 18, 4, 0, 37, 250_000, tzinfo=UTC)


class FrozenClock(StepClock):
    """A clock that never moves: every memory of a job is made in the same microsecond."""

    def now(self) -> datetime:
        return INSTANT


def test_ids_made_in_one_instant_sort_in_the_order_they_were_made() -> None:
    made = [new_memory_id(INSTANT) for _ in range(200)]

    assert sorted(made) == made and len(set(made)) == len(made)
    assert all(is_memory_id(memory_id) and memory_id.startswith("20260318_040037_") for memory_id in made)


def test_ids_of_later_microseconds_sort_later_even_from_another_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = []
    for step in range(50):
        # Each id as if made by a fresh process: nothing remembered of the last one
        monkeypatch.setattr("memory_engine.models.domain._last_id", "")
        made.append(new_memory_id(INSTANT + timedelta(microseconds=step)))

    assert sorted(made) == made


def test_the_memories_of_one_extraction_in_one_second_sort_as_their_batches() -> None:
    # Given a session of 40 turns extracted by one job under a clock that does not move
    engine = fake_engine()
    engine.clock = FrozenClock()
    for n in range(40):
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "t1",
            "new_dialog": {"uuid": f"d{n}", "query": f"turn {n}"},
        }
        consolidate.run(engine, "acme", ConsolidateRequest.model_validate(request))
    # When its memories are written (five batches of eight, all in the same instant)
    memories = run_worker(engine)
    # Then their ids sort as the batches were cut, oldest turns first
    by_id = sorted(memories, key=lambda memory: memory.memory_id)
    assert len(memories) == 5 and {m.memory_id[:15] for m in memories} == {"20260318_040037"}
    assert [m.first_seq for m in by_id] == sorted(m.first_seq for m in memories)
