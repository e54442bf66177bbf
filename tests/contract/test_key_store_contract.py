"""The `KeyStore` contract: API keys by key id, hashes only. Every backend passes these assertions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from memory_engine.errors import Conflict, NotFound
from memory_engine.models.keys import ApiKey
from memory_engine.ports import KeyStore
from tests.contract.builders import OTHER_TENANT, T0, TENANT, append_turns, make_session


def make_key(key_id: str = "0123456789ab", *, tenant: str = TENANT, **overrides: Any) -> ApiKey:
    values: dict[str, Any] = {
        "key_id": key_id,
        "tenant": tenant,
        "key_hash": "sha256:" + "ab" * 32,
        "label": "ci",
        "created_at": T0,
    }
    return ApiKey(**(values | overrides))


def test_a_created_key_reads_back_whole(key_store: KeyStore) -> None:
    key = make_key()

    key_store.create_key(key)

    assert key_store.get_key(key.key_id) == key


def test_an_unknown_key_id_reads_as_none(key_store: KeyStore) -> None:
    assert key_store.get_key("ffffffffffff") is None


def test_creating_a_key_under_a_taken_id_is_a_conflict_and_keeps_the_first(key_store: KeyStore) -> None:
    first = make_key()
    key_store.create_key(first)

    with pytest.raises(Conflict):
        key_store.create_key(make_key(tenant=OTHER_TENANT))

    assert key_store.get_key(first.key_id) == first


def test_keys_are_listed_oldest_first_per_tenant_or_all(key_store: KeyStore) -> None:
    older = make_key("00000000000a", created_at=T0)
    newer = make_key("00000000000b", created_at=T0 + timedelta(minutes=1))
    foreign = make_key("00000000000c", tenant=OTHER_TENANT, created_at=T0 + timedelta(minutes=2))
    for key in (newer, foreign, older):
        key_store.create_key(key)

    assert key_store.list_keys(TENANT) == [older, newer]
    assert key_store.list_keys(OTHER_TENANT) == [foreign]
    assert key_store.list_keys() == [older, newer, foreign]


def test_revoking_a_key_stops_it_from_that_moment(key_store: KeyStore) -> None:
    key_store.create_key(make_key())
    at = T0 + timedelta(hours=1)

    revoked = key_store.revoke_key("0123456789ab", at)

    assert revoked.revoked_at == at
    assert key_store.get_key("0123456789ab") == revoked
    assert revoked.active(at - timedelta(seconds=1)) and not revoked.active(at)


def test_an_earlier_revocation_stands_against_a_later_one(key_store: KeyStore) -> None:
    key_store.create_key(make_key())
    first = key_store.revoke_key("0123456789ab", T0 + timedelta(hours=1))

    again = key_store.revoke_key("0123456789ab", T0 + timedelta(hours=2))

    assert again.revoked_at == first.revoked_at


def test_revoking_during_a_grace_period_ends_it_early(key_store: KeyStore) -> None:
    key_store.create_key(make_key())
    key_store.rotate_key("0123456789ab", make_key("00000000000d"), T0 + timedelta(days=1))

    revoked = key_store.revoke_key("0123456789ab", T0 + timedelta(hours=1))

    assert revoked.revoked_at == T0 + timedelta(hours=1)


def test_revoking_an_unknown_key_is_not_found(key_store: KeyStore) -> None:
    with pytest.raises(NotFound):
        key_store.revoke_key("ffffffffffff", T0)


def test_rotating_stores_the_replacement_and_revokes_the_old_key_from_the_given_time(
    key_store: KeyStore,
) -> None:
    key_store.create_key(make_key())
    replacement = make_key("00000000000d", created_at=T0 + timedelta(hours=1))
    grace_end = T0 + timedelta(hours=2)

    old = key_store.rotate_key("0123456789ab", replacement, grace_end)

    assert (old.revoked_at, old.replaced_by) == (grace_end, "00000000000d")
    assert key_store.get_key("0123456789ab") == old
    assert key_store.get_key("00000000000d") == replacement


def test_rotating_a_revoked_key_is_a_conflict_and_stores_no_replacement(key_store: KeyStore) -> None:
    key_store.create_key(make_key())
    key_store.revoke_key("0123456789ab", T0)

    with pytest.raises(Conflict):
        key_store.rotate_key("0123456789ab", make_key("00000000000d"), T0)

    assert key_store.get_key("00000000000d") is None


def test_rotating_an_unknown_key_is_not_found_and_stores_no_replacement(key_store: KeyStore) -> None:
    with pytest.raises(NotFound):
        key_store.rotate_key("ffffffffffff", make_key("00000000000d"), T0)

    assert key_store.get_key("00000000000d") is None


def test_keys_survive_reopening(key_store: KeyStore, reopen_key_store: Callable[[], KeyStore]) -> None:
    key_store.create_key(make_key())
    key_store.revoke_key("0123456789ab", T0 + timedelta(hours=1))

    reopened = reopen_key_store()

    assert reopened.get_key("0123456789ab") == make_key(revoked_at=T0 + timedelta(hours=1))


def test_the_key_table_lives_beside_the_engine_tables_without_disturbing_them(
    key_store: KeyStore, store: Any
) -> None:
    append_turns(store, make_session(), "d1")
    key_store.create_key(make_key())

    assert [turn.dialog_uuid for turn in store.list_turns(TENANT, "session-1")] == ["d1"]
    assert key_store.list_keys() == [make_key()]
