"""The `Store` contract, continued: tenants never see each other, data outlives the process, and
concurrent writers never corrupt a session. Every backend passes these same assertions."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from memory_engine.errors import NotFound, Unavailable
from memory_engine.ports import ConsolidateOutcome, Store
from tests.contract.builders import (
    OTHER_TENANT,
    SESSION,
    T0,
    TENANT,
    THREAD,
    append_turns,
    make_fork_plan,
    make_memory,
    make_session,
    make_turn,
    stored_turn,
)

# -- tenants and persistence -------------------------------------------------------------------


def test_another_tenant_sees_nothing_of_this_tenants_data(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")
    memory = make_memory("d1")
    store.save_memory(memory)
    store.create_fork(make_fork_plan())

    assert store.get_session(OTHER_TENANT, SESSION) is None
    assert stored_turn(store, OTHER_TENANT, SESSION, "d2") is None
    assert store.list_turns(OTHER_TENANT, SESSION) == []
    assert store.buffered_turns(OTHER_TENANT, SESSION) == []
    assert store.buffered_turns_in_threads(OTHER_TENANT, [THREAD, "fork-1"]) == []
    assert store.get_memory(OTHER_TENANT, memory.memory_id) is None
    assert store.list_memories(OTHER_TENANT, SESSION) == []
    assert list(store.iter_memories(OTHER_TENANT)) == []
    with pytest.raises(NotFound):
        store.delete_memory(OTHER_TENANT, memory.memory_id)
    with pytest.raises(NotFound):
        store.delete_dialog(OTHER_TENANT, SESSION, "d2")


def test_tenants_use_the_same_uuids_independently(store: Store) -> None:
    append_turns(store, make_session(), "d1")

    outcome = store.append_turn(
        make_session(tenant=OTHER_TENANT), make_turn("d1", tenant=OTHER_TENANT, answer="다른 대답")
    )
    store.create_fork(make_fork_plan())
    fork_of_other_tenant = make_fork_plan().model_copy(
        update={
            "target": make_session("fork-1", tenant=OTHER_TENANT, parent="fork-1"),
            "turns": [],
            "memories": [],
        }
    )
    store.create_fork(fork_of_other_tenant)

    assert outcome == ConsolidateOutcome(created=True, buffered_count=1)
    assert stored_turn(store, TENANT, SESSION, "d1") == make_turn("d1")
    assert store.get_session(OTHER_TENANT, "fork-1") is not None


def test_everything_written_survives_reopening(store: Store, reopen_store: Callable[[], Store]) -> None:
    append_turns(store, make_session(), "d1", "d2", "d3")
    memory = make_memory("d1", "d2")
    store.save_memory(memory)

    reopened = reopen_store()

    assert reopened.get_session(TENANT, SESSION) == make_session(next_seq=3)
    assert reopened.get_memory(TENANT, memory.memory_id) == memory
    assert [(t.dialog_uuid, t.status) for t in reopened.list_turns(TENANT, SESSION)] == [
        ("d1", "extracted"),
        ("d2", "extracted"),
        ("d3", "buffered"),
    ]
    assert stored_turn(reopened, TENANT, SESSION, "d3") == make_turn("d3", seq=2)


def test_stored_times_keep_their_instant(store: Store) -> None:
    store.append_turn(make_session(), make_turn("d1"))

    turn = stored_turn(store, TENANT, SESSION, "d1")

    assert turn is not None and turn.timestamp == T0 and turn.timestamp.utcoffset() is not None


# -- concurrency -------------------------------------------------------------------------------


def test_concurrent_appends_to_one_session_get_distinct_consecutive_seqs(store: Store) -> None:
    uuids = [f"d{i:02d}" for i in range(24)]

    def append_as_a_client_would(uuid: str) -> ConsolidateOutcome:
        # A store may refuse a turn it lost too many races for (DynamoDB's optimistic writes:
        # `Unavailable`, a retryable 503); how many it loses depends on the scheduler, so the
        # caller retries as the API tells it to. What must hold is what the retries produce.
        for _ in range(100):
            try:
                return append_turns(store, make_session(), uuid)[0]
            except Unavailable:
                continue
        raise AssertionError(f"{uuid} refused 100 times in a row")

    with ThreadPoolExecutor(max_workers=6) as pool:
        outcomes = list(pool.map(append_as_a_client_would, uuids))

    assert all(outcome.created for outcome in outcomes)
    assert sorted(outcome.buffered_count for outcome in outcomes) == list(range(1, 25))
    assert [turn.seq for turn in store.list_turns(TENANT, SESSION)] == list(range(24))


def test_concurrent_saves_of_overlapping_memories_claim_the_turns_once(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2", "d3")
    rivals = [make_memory("d1", "d2"), make_memory("d2", "d3", first_seq=1), make_memory("d1", "d2", "d3")]

    with ThreadPoolExecutor(max_workers=3) as pool:
        saved = list(pool.map(store.save_memory, rivals))

    assert saved.count(True) == 1
    assert len(store.list_memories(TENANT, SESSION)) == 1
