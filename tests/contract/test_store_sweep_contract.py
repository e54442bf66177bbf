"""`Store.full_buffers`, what the sweep reads: every backend passes these same assertions."""

from __future__ import annotations

from memory_engine.ports import Store
from tests.contract.builders import OTHER_TENANT, TENANT, append_turns, make_memory, make_session


def fill(store: Store, session: str, count: int, tenant: str = TENANT) -> list[str]:
    uuids = [f"{session}-d{n}" for n in range(count)]
    append_turns(store, make_session(session, tenant=tenant), *uuids)
    return uuids


def test_sessions_that_buffer_enough_turns_are_found_in_every_tenant(store: Store) -> None:
    fill(store, "full", 3)
    fill(store, "short", 2)
    fill(store, "full#odd", 4, tenant=OTHER_TENANT)

    assert store.full_buffers(3) == sorted([(TENANT, "full"), (OTHER_TENANT, "full#odd")])


def test_extracted_turns_do_not_count(store: Store) -> None:
    uuids = fill(store, "s1", 3)
    assert store.save_memory(make_memory(*uuids[:2], session_uuid="s1"))

    assert store.full_buffers(2) == []
    assert store.full_buffers(1) == [(TENANT, "s1")]


def test_an_empty_store_has_no_full_buffers(store: Store) -> None:
    assert store.full_buffers(1) == []
