"""API keys and their usage-plan keys (per-key rate limits): written in an order that never leaves a
usable key half-made, and brought back in step by `sync`."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.adapters.local.sqlite_keys import SqliteKeyStore
from memory_engine.edge.auth import key_id_of_usage_key, usage_key_value
from memory_engine.errors import Unavailable
from memory_engine.models.keys import ApiKey
from memory_engine.usecases import keys
from tests.fakes.ports import FakeUsagePlan

NOW = datetime(2026, 3, 18, 4, 0, 37, tzinfo=UTC)


class RefusingKeyStore(SqliteKeyStore):
    """A key store whose writes of new keys fail while `refusing`, as an unreachable table does."""

    refusing = True

    def create_key(self, key: ApiKey) -> None:
        self._check()
        super().create_key(key)

    def rotate_key(self, key_id: str, replacement: ApiKey, revoke_at: datetime) -> ApiKey:
        self._check()
        return super().rotate_key(key_id, replacement, revoke_at)

    def _check(self) -> None:
        if self.refusing:
            raise Unavailable("the key table is unreachable")


@pytest.fixture
def store() -> SqliteKeyStore:
    return SqliteKeyStore(":memory:")


@pytest.fixture
def plan() -> FakeUsagePlan:
    return FakeUsagePlan()


def test_the_usage_key_is_derived_from_the_key_id_and_maps_back_to_it() -> None:
    # Given a key id / When its usage-plan key value is derived
    value = usage_key_value("0123456789ab")
    # Then it is long enough for API Gateway, letters and digits only, and names its key id
    assert len(value) >= 30 and value.isalnum()
    assert key_id_of_usage_key(value) == "0123456789ab"


@pytest.mark.parametrize("value", ["", "0123456789ab", "memoryengineusagekeyXYZ", "otherprefix0123456789ab"])
def test_a_value_memory_engine_did_not_derive_maps_to_no_key_id(value: str) -> None:
    assert key_id_of_usage_key(value) is None


def test_a_created_key_is_enrolled_in_the_usage_plan(store: SqliteKeyStore, plan: FakeUsagePlan) -> None:
    # When a key is created with a usage plan
    issued = keys.create(store, NOW, "acme", usage=plan)
    # Then its key id has a usage-plan key, and the store holds it
    assert plan.enrolled == {issued.record.key_id}
    assert store.get_key(issued.record.key_id) == issued.record


def test_a_key_the_store_refuses_takes_its_usage_plan_key_back(plan: FakeUsagePlan) -> None:
    # Given a key store that cannot write
    refusing = RefusingKeyStore(":memory:")
    # When a key is created / Then the failure is reported and no usage-plan key is left
    with pytest.raises(Unavailable):
        keys.create(refusing, NOW, "acme", usage=plan)
    assert plan.enrolled == set() and plan.outside == set()


def test_when_the_usage_plan_is_unreachable_no_key_is_stored(
    store: SqliteKeyStore, plan: FakeUsagePlan
) -> None:
    # Given an unreachable usage plan
    plan.down = True
    # When a key is created / Then it fails and the key store holds nothing
    with pytest.raises(Unavailable):
        keys.create(store, NOW, "acme", usage=plan)
    assert store.list_keys() == []


def test_a_key_id_whose_usage_key_exists_already_is_drawn_again(
    store: SqliteKeyStore, plan: FakeUsagePlan, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a first drawn key id that already has a usage-plan key outside the plan
    drawn = iter(["aaaaaaaaaaaa", "bbbbbbbbbbbb"])
    monkeypatch.setattr(keys, "new_key_id", lambda: next(drawn))
    plan.outside.add("aaaaaaaaaaaa")
    # When a key is created
    issued = keys.create(store, NOW, "acme", usage=plan)
    # Then it gets the next id, and the key it clashed with is left alone
    assert issued.record.key_id == "bbbbbbbbbbbb"
    assert plan.outside == {"aaaaaaaaaaaa"} and plan.enrolled == {"bbbbbbbbbbbb"}


def test_revoking_removes_the_usage_plan_key(store: SqliteKeyStore, plan: FakeUsagePlan) -> None:
    issued = keys.create(store, NOW, "acme", usage=plan)

    keys.revoke(store, NOW, issued.record.key_id, usage=plan)

    assert plan.enrolled == set()


def test_a_revocation_stands_when_the_usage_plan_key_cannot_be_removed(
    store: SqliteKeyStore, plan: FakeUsagePlan, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a key, and then an unreachable usage plan
    issued = keys.create(store, NOW, "acme", usage=plan)
    plan.down = True
    # When the key is revoked
    with caplog.at_level(logging.WARNING, logger="memory_engine.keys"):
        revoked = keys.revoke(store, NOW, issued.record.key_id, usage=plan)
    # Then the key store has revoked it and the operator is told to sync
    assert not revoked.active(NOW)
    assert not store.get_key(issued.record.key_id).active(NOW)  # type: ignore[union-attr]
    assert "keys sync" in caplog.text


def test_rotation_without_grace_moves_the_usage_plan_key_to_the_new_key(
    store: SqliteKeyStore, plan: FakeUsagePlan
) -> None:
    old = keys.create(store, NOW, "acme", usage=plan)

    new = keys.rotate(store, NOW, old.record.key_id, usage=plan)

    assert plan.enrolled == {new.record.key_id}


def test_rotation_with_grace_keeps_the_old_usage_plan_key_meanwhile(
    store: SqliteKeyStore, plan: FakeUsagePlan
) -> None:
    old = keys.create(store, NOW, "acme", usage=plan)

    new = keys.rotate(store, NOW, old.record.key_id, timedelta(hours=1), usage=plan)

    assert plan.enrolled == {old.record.key_id, new.record.key_id}


def test_a_rotation_the_store_refuses_leaves_the_usage_plan_as_it_was(plan: FakeUsagePlan) -> None:
    # Given a key in a store that then refuses the rotation
    refusing = RefusingKeyStore(":memory:")
    refusing.refusing = False
    old = keys.create(refusing, NOW, "acme", usage=plan)
    refusing.refusing = True
    # When it is rotated / Then it fails, and only the old key is in the plan
    with pytest.raises(Unavailable):
        keys.rotate(refusing, NOW, old.record.key_id, usage=plan)
    assert plan.enrolled == {old.record.key_id}


def test_sync_enrolls_working_keys_and_removes_retired_ones(
    store: SqliteKeyStore, plan: FakeUsagePlan
) -> None:
    # Given a key made before the usage plan, a revoked key still in the plan, and an expired grace
    before = keys.create(store, NOW, "acme")
    revoked = keys.create(store, NOW, "acme", usage=plan)
    store.revoke_key(revoked.record.key_id, NOW)
    rotated = keys.create(store, NOW, "acme", usage=plan)
    successor = keys.rotate(store, NOW, rotated.record.key_id, timedelta(minutes=5), usage=plan)
    later = NOW + timedelta(minutes=10)
    # When the plan is synced
    outcome = keys.sync(store, plan, later)
    # Then exactly the working keys are in the plan
    assert plan.enrolled == {before.record.key_id, successor.record.key_id}
    assert outcome.added == [before.record.key_id]
    assert sorted(outcome.removed) == sorted([revoked.record.key_id, rotated.record.key_id])


def test_sync_replaces_a_usage_key_left_outside_the_plan(store: SqliteKeyStore, plan: FakeUsagePlan) -> None:
    # Given a working key whose API key exists but never joined the plan
    issued = keys.create(store, NOW, "acme")
    plan.outside.add(issued.record.key_id)
    # When the plan is synced / Then the key is in the plan
    keys.sync(store, plan, NOW)
    assert plan.enrolled == {issued.record.key_id} and plan.outside == set()


def test_a_dry_sync_says_what_it_would_do_and_changes_nothing(
    store: SqliteKeyStore, plan: FakeUsagePlan
) -> None:
    issued = keys.create(store, NOW, "acme")

    outcome = keys.sync(store, plan, NOW, dry_run=True)

    assert outcome.added == [issued.record.key_id] and not outcome.applied
    assert plan.enrolled == set()
