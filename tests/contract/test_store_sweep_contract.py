"""`Store.buffers`, what the sweep reads once per run: every backend passes these same assertions."""

from __future__ import annotations

from datetime import timedelta

from memory_engine.ports import Buffer, Store
from tests.contract.builders import (
    OTHER_TENANT,
    SESSION,
    TENANT,
    append_turns,
    make_memory,
    make_session,
    make_turn,
)


def fill(store: Store, session: str, count: int, tenant: str = TENANT) -> list[str]:
    uuids = [f"{session}-d{n}" for n in range(count)]
    append_turns(store, make_session(session, tenant=tenant), *uuids)
    return uuids


def test_every_buffering_session_of_every_tenant_comes_with_its_count_and_oldest(store: Store) -> None:
    # Given sessions of two tenants buffering 3, 2 and 4 turns
    fill(store, "full", 3)
    fill(store, "short", 2)
    fill(store, "full#odd", 4, tenant=OTHER_TENANT)
    arrived = make_turn("any").created_at

    # When the buffers are listed / Then each session comes once, sorted, with both
    assert store.buffers() == [
        Buffer(TENANT, "full", 3, arrived),
        Buffer(TENANT, "short", 2, arrived),
        Buffer(OTHER_TENANT, "full#odd", 4, arrived),
    ]


def test_a_sessions_oldest_arrival_is_its_earliest_buffered_turns(store: Store) -> None:
    # Given a session whose second turn arrived a day before its first was appended
    session = make_session(SESSION)
    later, earlier = make_turn("d1"), make_turn("d2")
    earlier = earlier.model_copy(update={"created_at": later.created_at - timedelta(days=1)})
    store.append_turn(session, later)
    store.append_turn(session, earlier)

    # When the buffers are listed / Then the session's oldest arrival is the earlier one
    [buffer] = store.buffers()
    assert (buffer.turns, buffer.oldest) == (2, earlier.created_at)


def test_extracted_turns_do_not_count(store: Store) -> None:
    uuids = fill(store, "s1", 3)
    assert store.save_memory(make_memory(*uuids[:2], session_uuid="s1"))
    fill(store, "s2", 1)
    assert store.save_memory(make_memory("s2-d0", session_uuid="s2"))

    assert [(b.session_uuid, b.turns) for b in store.buffers()] == [("s1", 1)]


def test_an_empty_store_has_no_buffers(store: Store) -> None:
    assert store.buffers() == []
