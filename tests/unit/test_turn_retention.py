"""Issue #45: a tenant's retention covers raw turns too. An extracted turn goes with its memory
when the sweep removes that memory at the end of the retention (the delete's cascade: store and
index); a buffered turn the retention passed over is extracted first, never dropped unread, and
then goes with its memory. Without a retention, turns stay as forgotten history. Both backends,
on a clock the test moves."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.domain import TurnStatus
from memory_engine.usecases import consolidate, sweep
from memory_engine.usecases.retention import set_retention
from tests.fakes.engine import run_worker
from tests.fakes.ports import SetClock

TENANT = "acme"
DAY = 86_400


def say(engine: Engine, session: str, uuid: str, force: bool = False, **options: object) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": uuid, "query": f"I walked by the river ({uuid}).", "answer": "Nice."},
            "options": {"force_summary": force, **options},
        }
    )
    consolidate.run(engine, TENANT, request)


def statuses(engine: Engine, session: str) -> dict[str, TurnStatus]:
    return {turn.dialog_uuid: turn.status for turn in engine.store.list_turns(TENANT, session)}


def test_extracted_turns_go_with_their_memory_when_the_retention_ends_it(
    engine: Engine, clock: SetClock
) -> None:
    # Given a tenant keeping 30 days, and a memory of two turns
    set_retention(engine.store, TENANT, 30)
    say(engine, "s1", "d1")
    say(engine, "s1", "d2", force=True)
    [memory] = run_worker(engine)

    # When 31 days pass and the sweep runs
    clock.advance(31 * DAY)
    sweep.run(engine)

    # Then the memory, its documents and the raw turns are gone
    assert engine.store.get_memory(TENANT, memory.memory_id) is None
    assert engine.index.search(TENANT, ["thread-1"], "river", [], k=10, kind="turn") == []
    assert statuses(engine, "s1") == {}


def test_a_buffered_turn_past_the_retention_is_extracted_first_then_goes_with_its_memory(
    engine: Engine, clock: SetClock
) -> None:
    # Given a turn left in the buffer (below the extraction point) of a tenant keeping 30 days
    set_retention(engine.store, TENANT, 30)
    say(engine, "s1", "d1")
    assert run_worker(engine) == []

    # When 31 days pass: the sweep forces its extraction instead of dropping it
    clock.advance(31 * DAY)
    sweep.run(engine)
    [memory] = run_worker(engine)
    assert memory.source_dialog_uuids == ["d1"]
    assert statuses(engine, "s1") == {"d1": TurnStatus.EXTRACTED}

    # Then 31 days later the memory ends, and the turn goes with it
    clock.advance(31 * DAY)
    sweep.run(engine)
    assert statuses(engine, "s1") == {}


def test_a_buffered_turn_within_the_retention_is_left_in_the_buffer(engine: Engine, clock: SetClock) -> None:
    set_retention(engine.store, TENANT, 30)
    say(engine, "s1", "d1")

    clock.advance(29 * DAY)
    sweep.run(engine)

    assert run_worker(engine) == []
    assert statuses(engine, "s1") == {"d1": TurnStatus.BUFFERED}


def test_without_a_retention_an_expired_memorys_turns_stay_as_forgotten_history(
    engine: Engine, clock: SetClock
) -> None:
    # Given a temporary memory (a day) of a tenant with no retention
    say(engine, "s1", "d1", force=True, memory_ttl_seconds=DAY)
    [memory] = run_worker(engine)

    # When it expires and the sweep removes it
    clock.advance(2 * DAY)
    sweep.run(engine)

    # Then its turn stays, forgotten
    assert engine.store.get_memory(TENANT, memory.memory_id) is None
    assert statuses(engine, "s1") == {"d1": TurnStatus.FORGOTTEN}
