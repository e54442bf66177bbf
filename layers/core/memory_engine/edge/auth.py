"""API keys → tenants. The same logic serves the local server and the Lambda authorizer.

Keys look like `me_<key_id>_<secret>`: the 12-hex-digit key id finds the stored record, the
secret (256 random bits) proves possession. Only `sha256:<hex>` of the whole key is stored. A
fast hash is enough because the secret is random, not a password: 2^256 guesses stay out of
reach however fast each one is, so a salt or a slow KDF would add cost and no safety. The
scheme prefix lets a later version (a peppered HMAC, say) live beside old hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from memory_engine.models.authorizer import KEY_ID_CONTEXT_KEY, TENANT_CONTEXT_KEY
from memory_engine.models.keys import KEY_ID_PATTERN
from memory_engine.ports import KeyStore

LOCAL_TENANT = "local"
LOCAL_KEY_ID = "local"
KEY_PREFIX = "me_"
HASH_SCHEME = "sha256"

_SCHEMES = frozenset({"token", "bearer"})
_KEY_ID = re.compile(KEY_ID_PATTERN)
_KEY_FORMAT = re.compile(r"^me_(?P<key_id>[0-9a-f]{12})_(?P<secret>[A-Za-z0-9_-]{32,128})$")

# The API Gateway API key that stands for a memory-engine key in the stage's usage plan (per-key
# throttling and quota). Its value is not a secret: with the API's key source AUTHORIZER, API
# Gateway takes it only from the authorizer's `usageIdentifierKey`, never from a caller's header.
# Letters and digits only, 32 characters for a 12-hex-digit key id (API Gateway wants 20 or more,
# older documentation 30).
USAGE_KEY_PREFIX = "memoryengineusagekey"
USAGE_KEY_NAME_PREFIX = "memory-engine-"


@dataclass(frozen=True)
class Principal:
    """Who a request is: the tenant every read and write is confined to, and the key used."""

    tenant: str
    key_id: str

    def context(self) -> dict[str, str]:
        """The authorizer context handed to handlers (`http.tenant_of` reads the tenant)."""
        return {TENANT_CONTEXT_KEY: self.tenant, KEY_ID_CONTEXT_KEY: self.key_id, "principalId": self.tenant}


def parse_authorization(header: str | None) -> str | None:
    """The key of `Authorization: Token <key>`, `Bearer <key>` or a bare `<key>` (the game
    dialect's documented form); None for anything else (another scheme, a scheme alone).

    Only the header's shape is read here: which tenant a key is, if any, is decided by the
    resolvers, with constant-time comparisons, whatever the form it came in."""
    words = (header or "").split()
    if len(words) == 2 and words[0].lower() in _SCHEMES:
        return words[1]
    if len(words) == 1 and words[0].lower() not in _SCHEMES:
        return words[0]
    return None


def new_key_id() -> str:
    return secrets.token_hex(6)


def format_key(key_id: str, secret: str | None = None) -> str:
    """`me_<key_id>_<secret>`, with a fresh 256-bit secret unless one is given."""
    return f"{KEY_PREFIX}{key_id}_{secret or secrets.token_urlsafe(32)}"


def key_id_of(key: str) -> str | None:
    """The key id of a well-formed store key; None for anything else (never an error)."""
    found = _KEY_FORMAT.match(key)
    return found["key_id"] if found else None


def usage_key_value(key_id: str) -> str:
    """The usage-plan API key value of a key id: what the authorizer returns as usageIdentifierKey
    and what `memory-engine keys create` registers in the usage plan. The one derivation."""
    return f"{USAGE_KEY_PREFIX}{key_id}"


def usage_key_name(key_id: str) -> str:
    """The usage-plan API key's name, as the API Gateway console lists it."""
    return f"{USAGE_KEY_NAME_PREFIX}{key_id}"


def key_id_of_usage_key(value: str) -> str | None:
    """The key id a usage-plan API key value stands for; None for a key memory-engine did not make."""
    key_id = value.removeprefix(USAGE_KEY_PREFIX)
    return key_id if key_id != value and _KEY_ID.match(key_id) else None


def hash_key(key: str) -> str:
    return f"{HASH_SCHEME}:{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()}"


def key_matches(key: str, stored_hash: str) -> bool:
    """Constant-time comparison of a presented key with a stored hash."""
    scheme, _, _ = stored_hash.partition(":")
    if scheme != HASH_SCHEME:
        return False
    return hmac.compare_digest(hash_key(key).encode(), stored_hash.encode())


class KeyResolver(Protocol):
    def principal_for(self, key: str) -> Principal | None: ...


class SingleKey:
    """One key for one tenant: the local server's own key (MEMORY_ENGINE_API_KEY or generated)."""

    def __init__(self, key: str, tenant: str = LOCAL_TENANT, key_id: str = LOCAL_KEY_ID) -> None:
        self._key = key.encode("utf-8", "surrogatepass")
        self._principal = Principal(tenant, key_id)

    def principal_for(self, key: str) -> Principal | None:
        presented = key.encode("utf-8", "surrogatepass")
        return self._principal if hmac.compare_digest(presented, self._key) else None


class StoreKeys:
    """Keys from a `KeyStore`: well-formed, known, not revoked (or in a rotation's grace period),
    and matching the stored hash."""

    def __init__(self, store: KeyStore, now: Callable[[], datetime]) -> None:
        self._store = store
        self._now = now

    def principal_for(self, key: str) -> Principal | None:
        key_id = key_id_of(key)
        if key_id is None:
            return None
        record = self._store.get_key(key_id)
        if record is None or not record.active(self._now()) or not key_matches(key, record.key_hash):
            return None
        return Principal(record.tenant, record.key_id)


class AnyKey:
    """The first resolver that knows the key wins (the local key, then the key store)."""

    def __init__(self, resolvers: Sequence[KeyResolver]) -> None:
        self._resolvers = list(resolvers)

    def principal_for(self, key: str) -> Principal | None:
        for resolver in self._resolvers:
            principal = resolver.principal_for(key)
            if principal is not None:
                return principal
        return None


def local_api_key(configured: str | None, data_dir: Path) -> tuple[str, bool]:
    """The configured key, else the one stored in the data dir, else a new one stored there.

    Returns (key, created) so the server can print a new key once.
    """
    if configured:
        return configured, False
    path = data_dir / "api_key"
    if path.exists():
        return path.read_text().strip(), False
    data_dir.mkdir(parents=True, exist_ok=True)
    key = "me_" + secrets.token_urlsafe(24)
    path.write_text(key + "\n")
    path.chmod(0o600)
    return key, True


def authenticate(header: str | None, keys: KeyResolver) -> Principal | None:
    """The principal for an Authorization header, or None (→ 401)."""
    key = parse_authorization(header)
    return keys.principal_for(key) if key else None
