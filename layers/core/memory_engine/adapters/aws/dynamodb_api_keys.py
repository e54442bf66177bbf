"""`KeyStore` on DynamoDB: API keys in the engine's single table (docs/dynamodb.md reserves them).

| item | pk | sk | attributes |
|---|---|---|---|
| API key | `KEY#<key id>` | `KEY` | key_id, tenant, key_hash, label, created_at, revoked_at, replaced_by |
| key listing | `KEYS` | `<tenant>#<key id>` | key_id |

The authorizer reads one item (GetItem on `KEY#<key id>`). The listing partition serves the CLI's
`keys list` (rare): one Query plus a BatchGetItem, no Scan and no index that reindex walks. A key
and its listing entry are written in one transaction. Tenant names hold no `#` (TENANT_PATTERN).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

from pydantic import TypeAdapter

from memory_engine.adapters.aws.clients import aws_errors, client
from memory_engine.errors import Conflict, NotFound
from memory_engine.models.keys import ApiKey

KEY_SK = "KEY"
LISTING_PK = "KEYS"
_FIELDS = ("key_id", "tenant", "key_hash", "label", "created_at", "revoked_at", "replaced_by")
_BATCH_GET = 100
_DATETIME: TypeAdapter[datetime] = TypeAdapter(datetime)


def key_pk(key_id: str) -> str:
    return f"KEY#{key_id}"


P = ParamSpec("P")
R = TypeVar("R")


def _mapped(
    method: Callable[Concatenate[DynamoDbKeyStore, P], R],
) -> Callable[Concatenate[DynamoDbKeyStore, P], R]:
    """Run a KeyStore method inside the shared AWS error mapping: throttling, outages and a
    missing table become `Unavailable` (a 503 naming no table), as for every other adapter."""

    @functools.wraps(method)
    def mapped(self: DynamoDbKeyStore, *args: P.args, **kwargs: P.kwargs) -> R:
        with aws_errors(
            "The API key table", "Create it or fix MEMORY_ENGINE_TABLE_NAME.", resource=self._table
        ):
            return method(self, *args, **kwargs)

    return mapped


class DynamoDbKeyStore:
    """The `KeyStore` port over the low-level DynamoDB client (the shared one, built on first use)."""

    def __init__(self, table_name: str, region: str | None = None, dynamodb: Any = None) -> None:
        self._table = table_name
        self._region = region
        self._client = dynamodb

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = client("dynamodb", self._region)  # only when a key is first used
        return self._client

    @_mapped
    def create_key(self, key: ApiKey) -> None:
        try:
            self.client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": _item(key),
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                    {"Put": {"TableName": self._table, "Item": _listing(key)}},
                ]
            )
        except self.client.exceptions.TransactionCanceledException as error:
            raise Conflict(f"Key id {key.key_id} is taken; draw another.") from error

    @_mapped
    def get_key(self, key_id: str) -> ApiKey | None:
        found = self.client.get_item(TableName=self._table, Key=_key(key_id), ConsistentRead=True)
        return _record(found["Item"]) if "Item" in found else None

    @_mapped
    def list_keys(self, tenant: str | None = None) -> list[ApiKey]:
        query: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": LISTING_PK}},
            "ConsistentRead": True,
        }
        if tenant is not None:
            query["KeyConditionExpression"] += " AND begins_with(sk, :tenant)"
            query["ExpressionAttributeValues"][":tenant"] = {"S": f"{tenant}#"}
        key_ids: list[str] = []
        for page in self.client.get_paginator("query").paginate(**query):
            key_ids.extend(item["key_id"]["S"] for item in page["Items"])
        keys = [key for key in self._get_many(key_ids) if tenant is None or key.tenant == tenant]
        return sorted(keys, key=lambda key: (key.created_at, key.key_id))

    @_mapped
    def revoke_key(self, key_id: str, at: datetime) -> ApiKey:
        while True:
            key = self._existing(key_id)
            if key.revoked_at is not None and key.revoked_at <= at:
                return key  # an earlier revocation stands
            revoked = key.model_copy(update={"revoked_at": at})
            # Optimistic: written only if nobody changed the revocation since it was read.
            condition, values = "attribute_exists(pk) AND ", {":at": {"S": _text(at)}}
            if key.revoked_at is None:
                condition += "attribute_not_exists(revoked_at)"
            else:
                condition += "revoked_at = :old"
                values[":old"] = {"S": _text(key.revoked_at)}
            try:
                self.client.update_item(
                    TableName=self._table,
                    Key=_key(key_id),
                    UpdateExpression="SET revoked_at = :at",
                    ConditionExpression=condition,
                    ExpressionAttributeValues=values,
                )
            except self.client.exceptions.ConditionalCheckFailedException:
                continue  # changed meanwhile: read again
            return revoked

    @_mapped
    def rotate_key(self, key_id: str, replacement: ApiKey, revoke_at: datetime) -> ApiKey:
        old = self._existing(key_id)
        if old.revoked_at is not None or old.replaced_by is not None:
            raise _already_retired(key_id)
        try:
            self.client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": _item(replacement),
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                    {"Put": {"TableName": self._table, "Item": _listing(replacement)}},
                    {
                        "Update": {
                            "TableName": self._table,
                            "Key": _key(key_id),
                            "UpdateExpression": "SET revoked_at = :at, replaced_by = :new",
                            "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(revoked_at)"
                            " AND attribute_not_exists(replaced_by)",
                            "ExpressionAttributeValues": {
                                ":at": {"S": _text(revoke_at)},
                                ":new": {"S": replacement.key_id},
                            },
                        }
                    },
                ]
            )
        except self.client.exceptions.TransactionCanceledException as error:
            reasons = error.response.get("CancellationReasons", [])
            if reasons and reasons[0].get("Code") == "ConditionalCheckFailed":
                raise Conflict(f"Key id {replacement.key_id} is taken; draw another.") from error
            self._existing(key_id)  # NotFound if it went meanwhile
            raise _already_retired(key_id) from error
        return old.model_copy(update={"revoked_at": revoke_at, "replaced_by": replacement.key_id})

    def _existing(self, key_id: str) -> ApiKey:
        key = self.get_key(key_id)
        if key is None:
            raise NotFound(
                f"No API key with id {key_id}; `memory-engine keys list` shows the ids.",
                [{"field": "key_id", "message": "unknown key id"}],
            )
        return key

    def _get_many(self, key_ids: list[str]) -> list[ApiKey]:
        found: list[ApiKey] = []
        for start in range(0, len(key_ids), _BATCH_GET):
            pending: dict[str, Any] = {
                self._table: {
                    "Keys": [_key(key_id) for key_id in key_ids[start : start + _BATCH_GET]],
                    "ConsistentRead": True,
                }
            }
            while pending:
                answer = self.client.batch_get_item(RequestItems=pending)
                found.extend(_record(item) for item in answer["Responses"].get(self._table, []))
                pending = answer.get("UnprocessedKeys") or {}
        return found


def _already_retired(key_id: str) -> Conflict:
    return Conflict(
        f"Key {key_id} is already revoked or rotated: create a new key for its tenant instead.",
        [{"field": "key_id", "message": "revoked or rotated already"}],
    )


def _key(key_id: str) -> dict[str, Any]:
    return {"pk": {"S": key_pk(key_id)}, "sk": {"S": KEY_SK}}


def _text(moment: datetime) -> str:
    """A time as `_item` writes it (pydantic's JSON form), so a condition can compare the two."""
    return str(_DATETIME.dump_python(moment, mode="json"))


def _item(key: ApiKey) -> dict[str, Any]:
    values = key.model_dump(mode="json")
    item = {"pk": {"S": key_pk(key.key_id)}, "sk": {"S": KEY_SK}}
    item.update({name: {"S": str(values[name])} for name in _FIELDS if values[name] is not None})
    return item


def _listing(key: ApiKey) -> dict[str, Any]:
    return {"pk": {"S": LISTING_PK}, "sk": {"S": f"{key.tenant}#{key.key_id}"}, "key_id": {"S": key.key_id}}


def _record(item: dict[str, Any]) -> ApiKey:
    return ApiKey.model_validate({name: item[name]["S"] for name in _FIELDS if name in item})
