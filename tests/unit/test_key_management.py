"""Creating, rotating and revoking API keys (the use cases behind `memory-engine keys`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.adapters.local.sqlite_keys import SqliteKeyStore
from memory_engine.errors import Conflict, InvalidInput, NotFound
from memory_engine.usecases import keys

NOW = datetime(2026, 3, 18, 4, 0, 37, tzinfo=UTC)


@pytest.fixture
def store() -> SqliteKeyStore:
    return SqliteKeyStore(":memory:")


def test_a_created_key_is_stored_as_a_hash_under_its_id(store: SqliteKeyStore) -> None:
    issued = keys.create(store, NOW, "acme", "ci runner")

    stored = store.get_key(issued.record.key_id)

    assert stored == issued.record and stored.label == "ci runner"
    assert issued.key not in stored.model_dump_json()


def test_every_created_key_is_different(store: SqliteKeyStore) -> None:
    issued = {keys.create(store, NOW, "acme").key for _ in range(20)}

    assert len(issued) == 20


@pytest.mark.parametrize("tenant", ["", "a b", "a#b", "-lead", "x" * 65, "테넌트"])
def test_an_invalid_tenant_name_is_refused(store: SqliteKeyStore, tenant: str) -> None:
    with pytest.raises(InvalidInput):
        keys.create(store, NOW, tenant)


def test_rotation_keeps_the_tenant_and_label_and_links_the_keys(store: SqliteKeyStore) -> None:
    old = keys.create(store, NOW, "acme", "mobile app")

    new = keys.rotate(store, NOW, old.record.key_id)

    assert (new.record.tenant, new.record.label) == ("acme", "mobile app")
    assert store.get_key(old.record.key_id).replaced_by == new.record.key_id  # type: ignore[union-attr]


def test_rotating_a_revoked_key_is_a_conflict(store: SqliteKeyStore) -> None:
    old = keys.create(store, NOW, "acme")
    keys.revoke(store, NOW, old.record.key_id)

    with pytest.raises(Conflict):
        keys.rotate(store, NOW, old.record.key_id)


def test_rotating_an_unknown_key_is_not_found(store: SqliteKeyStore) -> None:
    with pytest.raises(NotFound):
        keys.rotate(store, NOW, "ffffffffffff")


def test_a_negative_grace_period_is_refused(store: SqliteKeyStore) -> None:
    old = keys.create(store, NOW, "acme")

    with pytest.raises(InvalidInput):
        keys.rotate(store, NOW, old.record.key_id, timedelta(seconds=-1))


def test_listing_one_tenant_leaves_out_the_others(store: SqliteKeyStore) -> None:
    mine = keys.create(store, NOW, "acme")
    keys.create(store, NOW, "globex")

    assert keys.list_keys(store, "acme") == [mine.record]
