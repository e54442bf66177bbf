"""API keys kept hashed in the DynamoDB table: what the Lambda authorizer resolves keys with.

A key reads `me_<key_id>_<secret>`. Its item is `pk = KEY#<key_id>`, `sk = KEY`, holding the
tenant and the SHA-256 of the whole key; the key itself is never stored. The key id makes the
lookup one GetItem; the secret is 32 random bytes, so a fast hash is enough (no password
stretching needed). Rotation, revocation and listing belong to key management (hardening issue);
an item with `disabled = true` already resolves to no tenant.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime
from typing import Any

from memory_engine.errors import Conflict, Unavailable

KEY_PREFIX = "me"
KEY_SORT = "KEY"


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_id_of(key: str) -> str | None:
    """The key id of `me_<key_id>_<secret>`, or None when the key has another shape."""
    prefix, _, rest = key.partition("_")
    key_id, _, secret = rest.partition("_")
    if prefix != KEY_PREFIX or not key_id.isalnum() or not secret:
        return None
    return key_id


def key_partition(key_id: str) -> str:
    return f"KEY#{key_id}"


def new_key() -> tuple[str, str]:
    """A fresh (key_id, key): 16 hex digits of id, 32 random bytes of secret."""
    key_id = secrets.token_hex(8)
    return key_id, f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"


def _client() -> Any:
    import boto3  # only the authorizer and the key CLI pay for boto3

    return boto3.client("dynamodb")


class DynamoDbKeyResolver:
    """tenant_for(key): one GetItem by key id, then a constant-time comparison of the hashes."""

    def __init__(self, table_name: str, client: Any = None) -> None:
        self._table = table_name
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = _client()
        return self._client

    def tenant_for(self, key: str) -> str | None:
        key_id = key_id_of(key)
        if key_id is None:
            return None
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            item = self.client.get_item(
                TableName=self._table,
                Key={"pk": {"S": key_partition(key_id)}, "sk": {"S": KEY_SORT}},
            ).get("Item")
        except (BotoCoreError, ClientError) as error:  # the store failed, not the key: 503, not 401
            raise Unavailable("The API key store is unavailable; retry shortly.") from error
        if not item or item.get("disabled", {}).get("BOOL", False):
            return None
        stored = item.get("key_sha256", {}).get("S", "")
        if not hmac.compare_digest(stored, key_digest(key)):
            return None
        tenant = item.get("tenant", {}).get("S")
        return tenant or None

    def create_key(self, tenant: str) -> str:
        """Store a new key for the tenant and return it; only its hash is kept."""
        if not tenant:
            raise ValueError("tenant must not be empty")
        key_id, key = new_key()
        try:
            self.client.put_item(
                TableName=self._table,
                Item={
                    "pk": {"S": key_partition(key_id)},
                    "sk": {"S": KEY_SORT},
                    "tenant": {"S": tenant},
                    "key_sha256": {"S": key_digest(key)},
                    "created_at": {"S": datetime.now(UTC).isoformat()},
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except self.client.exceptions.ConditionalCheckFailedException as error:
            raise Conflict("A key with this id exists already; create the key again.") from error
        return key
