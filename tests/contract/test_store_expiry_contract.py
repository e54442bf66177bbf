"""Expiring memories (`Memory.expires_at`): gone for every read from the instant they expire, and
listed for the sweep until it removes them. Every backend passes these same assertions, on the
clock the test moves (`store_clock`), never a sleep."""

from __future__ import annotations

from datetime import timedelta

from memory_engine.models.domain import Memory
from memory_engine.ports import Store
from tests.contract.builders import (
    OTHER_TENANT,
    SESSION,
    TENANT,
    THREAD,
    append_turns,
    make_memory,
    make_session,
)
from tests.fakes.ports import SetClock

HOUR = 3600


def expiring(clock: SetClock, seconds: float, *dialogs: str, tenant: str = TENANT) -> Memory:
    return make_memory(*dialogs, tenant=tenant, expires_at=clock.now() + timedelta(seconds=seconds))


def stored_with_turns(store: Store, memory: Memory, *dialogs: str) -> Memory:
    append_turns(store, make_session(SESSION, tenant=memory.tenant), *dialogs)
    assert store.save_memory(memory)
    return memory


def soon_and_kept(store: Store, clock: SetClock) -> tuple[Memory, Memory]:
    """A memory of the turn d1 that expires in an hour, and one of d2 that never does."""
    soon = stored_with_turns(store, expiring(clock, HOUR, "d1"), "d1", "d2")
    kept = make_memory("d2")
    assert store.save_memory(kept)
    return soon, kept


def test_a_memory_keeps_its_expiry_through_the_store(store: Store, store_clock: SetClock) -> None:
    memory = stored_with_turns(store, expiring(store_clock, HOUR, "d1"), "d1")

    stored = store.get_memory(TENANT, memory.memory_id)

    assert stored is not None and stored.expires_at == memory.expires_at


def test_a_memory_without_expiry_has_none(store: Store) -> None:
    memory = stored_with_turns(store, make_memory("d1"), "d1")

    stored = store.get_memory(TENANT, memory.memory_id)

    assert stored is not None and stored.expires_at is None


def test_an_expired_memory_is_gone_from_every_read_before_any_removal(
    store: Store, store_clock: SetClock
) -> None:
    # Given a memory that expires in an hour and one that never does
    soon, kept = soon_and_kept(store, store_clock)
    both = {soon.memory_id, kept.memory_id}
    assert store.get_memory(TENANT, soon.memory_id) is not None
    assert set(store.get_memories(TENANT, list(both))) == both

    # When the clock passes its expiry (and nothing has removed it)
    store_clock.advance(HOUR)

    # Then no read returns it, and the other is untouched
    assert store.get_memory(TENANT, soon.memory_id) is None
    assert set(store.get_memories(TENANT, list(both))) == {kept.memory_id}
    assert set(store.get_memories(TENANT, list(both), vectors=False)) == {kept.memory_id}
    assert [m.memory_id for m in store.list_memories(TENANT, SESSION)] == [kept.memory_id]
    assert [m.memory_id for m in store.list_thread_memories(TENANT, THREAD)] == [kept.memory_id]
    assert [m.memory_id for m in store.iter_memories(TENANT)] == [kept.memory_id]
    assert [m.memory_id for m in store.iter_memories()] == [kept.memory_id]


def test_the_sweep_reads_an_expired_memory_still_stored_and_nothing_removed(
    store: Store, store_clock: SetClock
) -> None:
    # Given a memory that expired an hour ago (not yet removed), one that never does, and one
    # that expired and was removed
    soon, kept = soon_and_kept(store, store_clock)
    gone = make_memory(expires_at=store_clock.now() + timedelta(seconds=HOUR))
    assert store.save_memory(gone)
    store_clock.advance(2 * HOUR)
    store.delete_memory(TENANT, gone.memory_id)
    wanted = [soon.memory_id, kept.memory_id, gone.memory_id]

    # When the memories are read with the expired ones (what the sweep removes next)
    read = store.get_memories(TENANT, wanted, vectors=False, expired=True)

    # Then the expired one still stored is read with its session and turns, beside the live one
    assert set(read) == {soon.memory_id, kept.memory_id}
    assert read[soon.memory_id].session_uuid == SESSION
    assert read[soon.memory_id].source_dialog_uuids == ["d1"]
    assert read[soon.memory_id].expires_at == soon.expires_at
    # And every other read still leaves it out
    assert set(store.get_memories(TENANT, wanted)) == {kept.memory_id}


def test_a_thread_page_is_filled_past_expired_memories(store: Store, store_clock: SetClock) -> None:
    append_turns(store, make_session(SESSION), "d1", "d2", "d3", "d4")
    memories = [
        make_memory(uuid, expires_at=store_clock.now() + timedelta(seconds=HOUR) if n < 2 else None)
        for n, uuid in enumerate(("d1", "d2", "d3", "d4"))
    ]
    for memory in memories:
        assert store.save_memory(memory)
    store_clock.advance(HOUR)

    page = store.list_thread_memories(TENANT, THREAD, limit=2)

    assert [m.memory_id for m in page] == [memories[2].memory_id, memories[3].memory_id]


def test_expired_memories_are_listed_for_the_sweep_across_tenants_soonest_first(
    store: Store, store_clock: SetClock
) -> None:
    later = stored_with_turns(store, expiring(store_clock, 2 * HOUR, "d1"), "d1", "d2")
    sooner = stored_with_turns(store, expiring(store_clock, HOUR, "d2", tenant=OTHER_TENANT), "d2")
    future = expiring(store_clock, 10 * HOUR, "d2")
    assert store.save_memory(future)

    assert store.expired_memories(store_clock.now(), 10) == []
    store_clock.advance(HOUR)
    assert store.expired_memories(store_clock.now(), 10) == [(OTHER_TENANT, sooner.memory_id)]
    store_clock.advance(HOUR)
    expired = [(OTHER_TENANT, sooner.memory_id), (TENANT, later.memory_id)]
    assert store.expired_memories(store_clock.now(), 10) == expired
    assert store.expired_memories(store_clock.now(), 1) == expired[:1]


def test_an_expired_memory_can_be_deleted_and_then_is_no_longer_listed(
    store: Store, store_clock: SetClock
) -> None:
    memory = stored_with_turns(store, expiring(store_clock, HOUR, "d1"), "d1")
    store_clock.advance(HOUR)

    outcome = store.delete_memory(TENANT, memory.memory_id)

    assert outcome.deleted_memories == [memory.memory_id]
    assert store.expired_memories(store_clock.now(), 10) == []


def test_an_update_can_set_and_clear_an_expiry(store: Store, store_clock: SetClock) -> None:
    memory = stored_with_turns(store, make_memory("d1"), "d1")
    expiry = store_clock.now() + timedelta(seconds=HOUR)

    assert store.update_memory(memory.model_copy(update={"expires_at": expiry}))
    store_clock.advance(HOUR)
    assert store.get_memory(TENANT, memory.memory_id) is None
    assert store.expired_memories(store_clock.now(), 10) == [(TENANT, memory.memory_id)]

    assert store.update_memory(memory.model_copy(update={"expires_at": None}))
    assert store.get_memory(TENANT, memory.memory_id) is not None
    assert store.expired_memories(store_clock.now(), 10) == []


def test_memories_are_paged_by_id_past_expired_ones(store: Store, store_clock: SetClock) -> None:
    append_turns(store, make_session(SESSION), "d1", "d2", "d3", "d4", "d5")
    memories = [
        make_memory(uuid, expires_at=store_clock.now() + timedelta(seconds=HOUR) if n in (1, 2) else None)
        for n, uuid in enumerate(("d1", "d2", "d3", "d4", "d5"))
    ]
    for memory in memories:
        assert store.save_memory(memory)
    other = make_memory("x", tenant=OTHER_TENANT, session_uuid="", source_dialog_uuids=[])
    assert store.save_memory(other)
    store_clock.advance(HOUR)

    first = store.memories_after(TENANT, None, 2)
    rest = store.memories_after(TENANT, first[-1].memory_id, 2)

    live = [memories[0].memory_id, memories[3].memory_id, memories[4].memory_id]
    assert [m.memory_id for m in first] == live[:2]
    assert [m.memory_id for m in rest] == live[2:]  # short: the last page
    assert store.memories_after(TENANT, live[-1], 2) == []


def test_sessions_are_paged_and_every_one_is_visited_once(store: Store) -> None:
    names = [
        ("thread-b", "s3"),
        ("thread-a", "s2"),
        ("thread-a", "s1"),
        ("thread#c", "s4"),
        ("thread-a", "s#5"),
    ]
    for thread, session in names:
        append_turns(store, make_session(session, parent=thread), f"{session}-d1")
    append_turns(store, make_session("elsewhere", tenant=OTHER_TENANT), "e1")

    seen: list[tuple[str, str]] = []
    after: tuple[str, str] | None = None
    while page := store.sessions_after(TENANT, after, 2):
        seen += [(s.parent_session_uuid, s.session_uuid) for s in page]
        after = seen[-1]
        if len(page) < 2:
            break

    assert sorted(seen) == sorted(names)
    assert len(seen) == len(names)
    threads = [thread for thread, _ in seen]
    assert threads.index("thread-a") + 3 == len(threads) - threads[::-1].index(
        "thread-a"
    )  # a thread's together
