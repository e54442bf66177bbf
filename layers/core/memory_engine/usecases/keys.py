"""Manage API keys: create (the key is shown once), list, revoke, rotate. Used by the CLI."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta

from memory_engine.auth import format_key, hash_key, new_key_id
from memory_engine.errors import Conflict, InvalidInput, NotFound
from memory_engine.models.keys import TENANT_PATTERN, ApiKey, IssuedKey
from memory_engine.ports import KeyStore

# A clash of 48-bit key ids is rare; a few fresh draws make it vanish.
_ID_DRAWS = 5


def create(store: KeyStore, now: datetime, tenant: str, label: str = "") -> IssuedKey:
    """A new key for `tenant`; the returned `key` is the only copy there will ever be."""
    _check_tenant(tenant)
    return _issue(store.create_key, now, tenant, label)


def list_keys(store: KeyStore, tenant: str | None = None) -> list[ApiKey]:
    if tenant is not None:
        _check_tenant(tenant)
    return store.list_keys(tenant)


def revoke(store: KeyStore, now: datetime, key_id: str) -> ApiKey:
    """The key stops working now (API Gateway's authorizer cache may serve it up to its TTL)."""
    return store.revoke_key(key_id, now)


def rotate(store: KeyStore, now: datetime, key_id: str, grace: timedelta = timedelta(0)) -> IssuedKey:
    """A new key for the same tenant; the old one keeps working for `grace`, then never again."""
    if grace < timedelta(0):
        raise InvalidInput("grace must not be negative.", [{"field": "grace", "message": "negative"}])
    old = store.get_key(key_id)
    if old is None:
        raise NotFound(
            f"No API key with id {key_id}; `memory-engine keys list` shows the ids.",
            [{"field": "key_id", "message": "unknown key id"}],
        )
    if old.revoked_at is not None:
        raise Conflict(
            f"Key {key_id} is already revoked or rotated: create a new key for tenant {old.tenant}.",
            [{"field": "key_id", "message": "revoked or rotated already"}],
        )
    return _issue(lambda fresh: store.rotate_key(key_id, fresh, now + grace), now, old.tenant, old.label)


def _issue(write: Callable[[ApiKey], object], now: datetime, tenant: str, label: str) -> IssuedKey:
    for draw in range(_ID_DRAWS):
        key_id = new_key_id()
        key = format_key(key_id)
        record = ApiKey(key_id=key_id, tenant=tenant, key_hash=hash_key(key), label=label, created_at=now)
        try:
            write(record)
        except Conflict:
            if draw == _ID_DRAWS - 1:
                raise
            continue
        return IssuedKey(key=key, record=record)
    raise AssertionError("unreachable")


def _check_tenant(tenant: str) -> None:
    if not re.match(TENANT_PATTERN, tenant):
        raise InvalidInput(
            f"Tenant {tenant!r} is not a valid name: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit.",
            [{"field": "tenant", "message": "invalid tenant name"}],
        )
