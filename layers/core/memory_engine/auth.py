"""API keys → tenants. The same logic serves the local server and the Lambda authorizer."""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path
from typing import Protocol, runtime_checkable

LOCAL_TENANT = "local"


def parse_authorization(header: str | None) -> str | None:
    """The key of `Authorization: Token <key>` or `Bearer <key>`; None for anything else."""
    if not header:
        return None
    scheme, _, key = header.strip().partition(" ")
    if scheme.lower() not in {"token", "bearer"}:
        return None
    key = key.strip()
    return key or None


class KeyResolver(Protocol):
    def tenant_for(self, key: str) -> str | None: ...


@runtime_checkable
class KeyIssuer(Protocol):
    """A key store that can mint keys (the AWS table); the local server has one fixed key."""

    def create_key(self, tenant: str) -> str:
        """A new key for the tenant, returned once; only its hash is kept."""
        ...


class SingleKey:
    """One key for one tenant: the local server's default."""

    def __init__(self, key: str, tenant: str = LOCAL_TENANT) -> None:
        self._key = key
        self._tenant = tenant

    def tenant_for(self, key: str) -> str | None:
        return self._tenant if hmac.compare_digest(key.encode(), self._key.encode()) else None


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


def authorize(header: str | None, keys: KeyResolver) -> str | None:
    """The tenant for an Authorization header, or None (→ 401)."""
    key = parse_authorization(header)
    return keys.tenant_for(key) if key else None
