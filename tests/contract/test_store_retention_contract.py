"""A tenant's retention (`Store.set_retention`, usecases/retention.py): every memory the store
saves for that tenant expires that many days after its creation; the other tenants' do not.
Every backend passes these same assertions, on the clock the test moves."""

from __future__ import annotations

from datetime import timedelta

from memory_engine.ports import Store
from memory_engine.usecases.retention import set_retention
from tests.contract.builders import (
    OTHER_TENANT,
    SESSION,
    TENANT,
    append_turns,
    make_fork_plan,
    make_memory,
    make_session,
)
from tests.fakes.ports import SetClock

DAY = timedelta(days=1)


def test_a_retention_is_kept_per_tenant(store: Store) -> None:
    assert store.get_retention(TENANT) is None

    store.set_retention(TENANT, 30)

    assert store.get_retention(TENANT) == 30
    assert store.get_retention(OTHER_TENANT) is None
    store.set_retention(TENANT, None)
    assert store.get_retention(TENANT) is None


def test_a_saved_memory_expires_after_its_tenants_retention(store: Store) -> None:
    store.set_retention(TENANT, 30)
    append_turns(store, make_session(SESSION), "d1")
    append_turns(store, make_session(SESSION, tenant=OTHER_TENANT), "d1")
    memory, elsewhere = make_memory("d1"), make_memory("d1", tenant=OTHER_TENANT)

    assert store.save_memory(memory) and store.save_memory(elsewhere)

    stored = store.get_memory(TENANT, memory.memory_id)
    assert stored is not None and stored.expires_at == memory.created_at + 30 * DAY
    other = store.get_memory(OTHER_TENANT, elsewhere.memory_id)
    assert other is not None and other.expires_at is None


def test_an_earlier_expiry_asked_for_is_kept(store: Store) -> None:
    store.set_retention(TENANT, 30)
    append_turns(store, make_session(SESSION), "d1")
    memory = make_memory("d1")
    soon = memory.model_copy(update={"expires_at": memory.created_at + DAY})

    assert store.save_memory(soon)

    stored = store.get_memory(TENANT, memory.memory_id)
    assert stored is not None and stored.expires_at == memory.created_at + DAY


def test_a_fork_or_an_import_writes_its_memories_under_the_retention(store: Store) -> None:
    store.set_retention(TENANT, 7)
    plan = make_fork_plan()

    store.create_fork(plan)

    (copied,) = store.list_memories(TENANT, plan.target.session_uuid)
    assert copied.expires_at == plan.memories[0].created_at + 7 * DAY


def test_setting_a_retention_stamps_the_memories_already_stored(store: Store, store_clock: SetClock) -> None:
    # Given memories stored before the tenant had a retention, one of them older than it
    append_turns(store, make_session(SESSION), "d1", "d2")
    old = make_memory("d1", created_at=store_clock.now() - 40 * DAY)
    recent = make_memory("d2", created_at=store_clock.now() - DAY)
    assert store.save_memory(old) and store.save_memory(recent)

    # When a retention of 30 days is set
    stamped = set_retention(store, TENANT, 30)

    # Then the old one is gone from every read at once, and the recent one expires in 29 days
    assert stamped == 2
    assert store.get_memory(TENANT, old.memory_id) is None
    assert store.expired_memories(store_clock.now(), 10) == [(TENANT, old.memory_id)]
    kept = store.get_memory(TENANT, recent.memory_id)
    assert kept is not None and kept.expires_at == recent.created_at + 30 * DAY


def test_removing_a_memory_names_its_session_and_the_turns_it_left_forgotten(store: Store) -> None:
    # Given a memory of two turns
    append_turns(store, make_session(SESSION), "d1", "d2")
    memory = make_memory("d1", "d2")
    assert store.save_memory(memory)

    # When it is removed
    outcome = store.delete_memory(TENANT, memory.memory_id)

    # Then the outcome names what the sweep needs to remove those raw turns too, and no response shows it
    assert (outcome.session_uuid, sorted(outcome.forgotten_dialogs)) == (SESSION, ["d1", "d2"])
    assert "forgotten_dialogs" not in outcome.model_dump() and "session_uuid" not in outcome.model_dump()
