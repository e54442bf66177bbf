"""The API key store port: keys by key id, stored as hashes only."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: `memory_engine.ports` is loaded by every function, the key
    # records by those that read keys (the authorizer, the local server, the CLI)
    from memory_engine.models.keys import ApiKey


class KeyStore(Protocol):
    """API keys by key id (DynamoDB: `pk = KEY#<key_id>`); only hashes are stored, never keys."""

    def create_key(self, key: ApiKey) -> None:
        """Store a new key. Raises Conflict when the key id is taken (the caller draws another)."""
        ...

    def get_key(self, key_id: str) -> ApiKey | None: ...

    def list_keys(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (of one tenant, or of all), oldest first, revoked ones included."""
        ...

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey:
        """Stop the key working from `at` (an earlier revocation stands). Raises NotFound."""
        ...

    def rotate_key(self, key_id: str, replacement: ApiKey, revoke_at: datetime) -> ApiKey:
        """Atomically store `replacement` and revoke the old key from `revoke_at` (a grace period
        when in the future). Raises NotFound for an unknown key, Conflict for a revoked one."""
        ...
