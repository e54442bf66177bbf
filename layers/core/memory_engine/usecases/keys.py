"""Manage API keys: create (the key is shown once), list, revoke, rotate. Used by the CLI.

With a usage plan (`UsagePlanKeys`: API Gateway on AWS), every working key also has a usage-plan key
for its rate limits. Writes are ordered so that nothing usable is left half-made: the usage-plan key
comes first and is taken back if the key store refuses the key; a revocation is written to the key
store first, so it stands even when the usage-plan key cannot be deleted.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime, timedelta

from memory_engine.edge.auth import format_key, hash_key, new_key_id
from memory_engine.errors import Conflict, InvalidInput, NotFound
from memory_engine.models.keys import TENANT_PATTERN, ApiKey, IssuedKey, UsagePlanSync
from memory_engine.ports import KeyStore, UsagePlanKeys

log = logging.getLogger("memory_engine.keys")

# A clash of 48-bit key ids is rare; a few fresh draws make it vanish.
_ID_DRAWS = 5


def create(
    store: KeyStore, now: datetime, tenant: str, label: str = "", *, usage: UsagePlanKeys | None = None
) -> IssuedKey:
    """A new key for `tenant`; the returned `key` is the only copy there will ever be."""
    _check_tenant(tenant)
    return _issue(store.create_key, now, tenant, label, usage)


def list_keys(store: KeyStore, tenant: str | None = None) -> list[ApiKey]:
    if tenant is not None:
        _check_tenant(tenant)
    return store.list_keys(tenant)


def revoke(store: KeyStore, now: datetime, key_id: str, *, usage: UsagePlanKeys | None = None) -> ApiKey:
    """The key stops working now (API Gateway's authorizer cache may serve it up to its TTL)."""
    revoked = store.revoke_key(key_id, now)
    _withdraw(usage, key_id)
    return revoked


def rotate(
    store: KeyStore,
    now: datetime,
    key_id: str,
    grace: timedelta = timedelta(0),
    *,
    usage: UsagePlanKeys | None = None,
) -> IssuedKey:
    """A new key for the same tenant; the old one keeps working for `grace`, then never again.

    Without grace the old key's usage-plan key goes at once; with grace it stays, so the old key
    keeps its rate limit meanwhile, until `sync` removes it.
    """
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
    issued = _issue(
        lambda fresh: store.rotate_key(key_id, fresh, now + grace), now, old.tenant, old.label, usage
    )
    if grace == timedelta(0):
        _withdraw(usage, key_id)
    return issued


def sync(store: KeyStore, usage: UsagePlanKeys, now: datetime, *, dry_run: bool = False) -> UsagePlanSync:
    """Make the usage plan hold exactly the working keys: enroll keys issued before the plan (or
    while it was unreachable), remove the keys of revoked and expired ones."""
    working = {key.key_id for key in store.list_keys() if key.active(now)}
    enrolled = usage.key_ids()
    outcome = UsagePlanSync(
        added=sorted(working - enrolled), removed=sorted(enrolled - working), applied=not dry_run
    )
    if dry_run:
        return outcome
    for key_id in outcome.added:
        try:
            usage.add(key_id)
        except Conflict:  # its API key exists outside the plan (an earlier attempt half done)
            usage.remove(key_id)
            usage.add(key_id)
    for key_id in outcome.removed:
        usage.remove(key_id)
    return outcome


def _issue(
    write: Callable[[ApiKey], object],
    now: datetime,
    tenant: str,
    label: str,
    usage: UsagePlanKeys | None,
) -> IssuedKey:
    for draw in range(_ID_DRAWS):
        last = draw == _ID_DRAWS - 1
        key_id = new_key_id()
        key = format_key(key_id)
        record = ApiKey(key_id=key_id, tenant=tenant, key_hash=hash_key(key), label=label, created_at=now)
        if usage is not None:
            try:
                usage.add(key_id)
            except Conflict:
                if last:
                    raise
                continue
        try:
            write(record)
        except Exception as error:
            _withdraw(usage, key_id)  # the key store refused it: its usage-plan key goes too
            if isinstance(error, Conflict) and not last:
                continue
            raise
        return IssuedKey(key=key, record=record)
    raise AssertionError("unreachable")


def _withdraw(usage: UsagePlanKeys | None, key_id: str) -> None:
    """Remove a key id's usage-plan key after the key store has spoken; a failure only warns:
    the key store decides whether a key works, and `sync` finishes the job later."""
    if usage is None:
        return
    try:
        usage.remove(key_id)
    except Exception as error:
        log.warning(
            "The usage-plan key of %s could not be removed (%s); run `memory-engine keys sync` later.",
            key_id,
            type(error).__name__,
        )


def _check_tenant(tenant: str) -> None:
    if not re.match(TENANT_PATTERN, tenant):
        raise InvalidInput(
            f"Tenant {tenant!r} is not a valid name: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit.",
            [{"field": "tenant", "message": "invalid tenant name"}],
        )
