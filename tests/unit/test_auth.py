"""API key format, hashing and the resolvers behind the local server and the Lambda authorizer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.adapters.local.sqlite_keys import SqliteKeyStore
from memory_engine.edge.auth import (
    AnyKey,
    Principal,
    SingleKey,
    StoreKeys,
    authenticate,
    format_key,
    hash_key,
    key_id_of,
    key_matches,
    new_key_id,
    parse_authorization,
)
from memory_engine.usecases import keys

NOW = datetime(2026, 3, 18, 4, 0, 37, tzinfo=UTC)


@pytest.fixture
def store() -> SqliteKeyStore:
    return SqliteKeyStore(":memory:")


def tenant_for(resolver: StoreKeys, key: str) -> str | None:
    principal = resolver.principal_for(key)
    return principal.tenant if principal else None


def test_a_new_key_carries_its_key_id_and_a_long_random_secret() -> None:
    key_id = new_key_id()

    key = format_key(key_id)

    assert key.startswith(f"me_{key_id}_") and key_id_of(key) == key_id
    assert len(key.split("_", 2)[2]) >= 43  # 32 random bytes, base64url


@pytest.mark.parametrize(
    "text", ["", "me_", "me_0123456789ab", "me_0123456789AB_" + "a" * 43, "xx_0123456789ab_" + "a" * 43]
)
def test_anything_but_a_well_formed_key_has_no_key_id(text: str) -> None:
    assert key_id_of(text) is None


def test_the_hash_names_its_scheme_and_matches_only_the_same_key() -> None:
    key = format_key("0123456789ab")

    stored = hash_key(key)

    assert stored.startswith("sha256:") and key not in stored
    assert key_matches(key, stored)
    assert not key_matches(key + "x", stored)
    assert not key_matches(key, "md5:" + stored.partition(":")[2])


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ("Bearer abc", "abc"),
        ("Token abc", "abc"),
        ("bearer  abc ", "abc"),
        ("Basic abc", None),
        ("Bearer", None),
        (None, None),
    ],
)
def test_the_authorization_header_gives_the_key_of_token_or_bearer(
    header: str | None, key: str | None
) -> None:
    assert parse_authorization(header) == key


def test_a_store_key_resolves_to_its_tenant_and_key_id(store: SqliteKeyStore) -> None:
    issued = keys.create(store, NOW, "acme")

    principal = StoreKeys(store, lambda: NOW).principal_for(issued.key)

    assert principal == Principal("acme", issued.record.key_id)


def test_a_store_key_stops_resolving_when_revoked(store: SqliteKeyStore) -> None:
    issued = keys.create(store, NOW, "acme")
    keys.revoke(store, NOW + timedelta(seconds=1), issued.record.key_id)

    resolver = StoreKeys(store, lambda: NOW + timedelta(seconds=2))

    assert resolver.principal_for(issued.key) is None


def test_a_rotated_key_resolves_until_its_grace_period_ends(store: SqliteKeyStore) -> None:
    old = keys.create(store, NOW, "acme")
    new = keys.rotate(store, NOW, old.record.key_id, timedelta(hours=1))

    during = StoreKeys(store, lambda: NOW + timedelta(minutes=59))
    after = StoreKeys(store, lambda: NOW + timedelta(hours=1))

    assert tenant_for(during, old.key) == tenant_for(during, new.key) == "acme"
    assert tenant_for(after, old.key) is None and tenant_for(after, new.key) == "acme"


def test_a_known_key_id_with_another_secret_does_not_resolve(store: SqliteKeyStore) -> None:
    issued = keys.create(store, NOW, "acme")

    forged = format_key(issued.record.key_id)

    assert StoreKeys(store, lambda: NOW).principal_for(forged) is None


def test_the_local_key_and_store_keys_resolve_side_by_side(store: SqliteKeyStore) -> None:
    issued = keys.create(store, NOW, "acme")
    resolver = AnyKey([SingleKey("local-secret"), StoreKeys(store, lambda: NOW)])

    assert authenticate("Bearer local-secret", resolver) == Principal("local", "local")
    assert authenticate(f"Bearer {issued.key}", resolver) == Principal("acme", issued.record.key_id)
    assert authenticate("Bearer nope", resolver) is None


def test_the_authorizer_context_carries_the_tenant_and_key_id() -> None:
    assert Principal("acme", "0123456789ab").context() == {
        "tenant": "acme",
        "key_id": "0123456789ab",
        "principalId": "acme",
    }


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ("me_0123456789ab_secret", "me_0123456789ab_secret"),
        ("  abc  ", "abc"),
        ("Token", None),
        ("bearer", None),
        ("abc def", None),
        ("", None),
    ],
)
def test_a_bare_key_is_a_key_and_a_scheme_alone_is_not(header: str, key: str | None) -> None:
    assert parse_authorization(header) == key
