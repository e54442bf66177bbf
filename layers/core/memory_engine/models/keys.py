"""API keys as the key store keeps them: a tenant, a hash of the key, and when it stops working.

The key itself (`me_<key_id>_<secret>`) is shown once at creation and never stored.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import ConfigDict, Field

from memory_engine.models.base import Model

KEY_ID_PATTERN = r"^[0-9a-f]{12}$"
# Tenants name every store key (DynamoDB `pk = KEY#...`, `TENANT#...`): no separators, no spaces.
TENANT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class ApiKey(Model):
    """One stored key. `revoked_at` in the future is a grace period (set by rotation)."""

    model_config = ConfigDict(frozen=True)

    key_id: str = Field(pattern=KEY_ID_PATTERN)
    tenant: str = Field(pattern=TENANT_PATTERN)
    key_hash: str = Field(repr=False, description="'<scheme>:<hex digest>' of the whole key")
    label: str = Field("", max_length=200)
    created_at: datetime
    revoked_at: datetime | None = None
    replaced_by: str | None = Field(None, description="key id of the key that rotation issued")

    def active(self, now: datetime) -> bool:
        return self.revoked_at is None or now < self.revoked_at


class IssuedKey(Model):
    """What creating or rotating a key returns: the only time the full key is ever seen."""

    key: str = Field(repr=False)
    record: ApiKey


class UsagePlanSync(Model):
    """What `memory-engine keys sync` did (or, dry, would do) to the usage plan."""

    added: list[str] = Field(default_factory=list, description="key ids given a usage-plan key")
    removed: list[str] = Field(default_factory=list, description="key ids whose usage-plan key went")
    applied: bool = True
