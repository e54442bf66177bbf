"""How long memories live on DynamoDB: the expired ones the sweep removes (the sparse `gsi5`)
and a tenant's retention (its settings item). docs/dynamodb.md describes both."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from itertools import islice

from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_reads as reads
from memory_engine.adapters.aws.dynamodb_table import DynamoTable
from memory_engine.adapters.encoding import to_text
from memory_engine.models.domain import Memory


def memories_after(
    table: DynamoTable,
    tenant: str,
    after: str | None,
    limit: int,
    live: Callable[[list[Memory]], list[Memory]],
) -> list[Memory]:
    """A page of the tenant's memories in id order after `after` (`Store.memories_after`), `live`
    leaving out the expired ones."""
    if limit <= 0:
        return []
    # gsi2 lists the tenant's memory keys in id order (keys only); the items are read whole.
    condition, values = "gsi2pk = :tenant", {":tenant": items.s(keys.tenant_memories(tenant))}
    if after:
        condition, values[":after"] = condition + " AND gsi2sk > :after", items.s(after)
    listed = table.query(
        IndexName=keys.GSI2, KeyConditionExpression=condition, ExpressionAttributeValues=values, Limit=limit
    )
    page: list[Memory] = []
    # Filled from further on past expired (or just deleted) memories: a short page is the last.
    while len(page) < limit and (wanted := list(islice(listed, limit - len(page)))):
        found = live(reads.memories(table, table.batch_get(reads.keys_of(wanted))))
        page += sorted(found, key=lambda memory: memory.memory_id)
    return page


def expired_memories(table: DynamoTable, now: datetime, limit: int) -> list[tuple[str, str]]:
    """(tenant, memory id) of up to `limit` memories expired at `now`, soonest first: a Query of
    each gsi5 partition (sparse: expiring memories only, sorted by expiry)."""
    found: list[tuple[str, str, str]] = []
    for shard in range(keys.EXPIRY_SHARDS):
        listed = table.query(
            IndexName=keys.GSI5,
            KeyConditionExpression="gsi5pk = :shard AND gsi5sk <= :now",
            ExpressionAttributeValues={
                ":shard": items.s(keys.expiry_pk(shard)),
                # '~' sorts after the '#' that ends a time: a memory expiring at `now` is in.
                ":now": items.s(to_text(now) + "~"),
            },
            Limit=max(limit, 1),
        )
        for item in islice(listed, max(limit, 0)):
            tenant, memory_id = keys.tenant_and_memory(items.required(item, keys.PK))
            found.append((items.required(item, keys.GSI5_SK), tenant, memory_id))
    return [(tenant, memory_id) for _, tenant, memory_id in sorted(found)[: max(limit, 0)]]


def get_retention(table: DynamoTable, tenant: str) -> int | None:
    item = table.get(keys.tenant_settings_pk(tenant), keys.SETTINGS_SK)
    return None if item is None or "retention_days" not in item else items.number(item, "retention_days")


def set_retention(table: DynamoTable, tenant: str, days: int | None) -> None:
    item: items.Item = {
        **keys.key(keys.tenant_settings_pk(tenant), keys.SETTINGS_SK),
        "kind": items.s("settings"),
        "tenant": items.s(tenant),
    }
    if days is not None:
        item["retention_days"] = items.n(days)
    table.put(item)
