"""Deletes in flight on DynamoDB (`Store.begin_delete`, `end_delete`, `deletes_begun`).

One small item per delete in its tenant's partition `T#<tenant>#DELETING`, keyed as the delete
is (`DeleteIntent.key`), and listed for the sweep by when it began in the `gsi5` partition
`DELETES` (the expiry index, sparse: its other partitions are the expiring memories' shards,
`EXPIRES#nn`). Deletes are rare next to what one index partition takes, so one partition serves.
"""

from __future__ import annotations

from datetime import datetime
from itertools import islice

from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws.dynamodb_table import DynamoTable
from memory_engine.adapters.encoding import to_text
from memory_engine.models.deletes import DeleteIntent


def _key(intent: DeleteIntent) -> items.Item:
    tenant, route, session_uuid, target = intent.key
    return keys.key(keys.deleting_pk(tenant), keys.deleting_sk(route, session_uuid, target))


def begin(table: DynamoTable, intent: DeleteIntent) -> None:
    item_key = _key(intent)
    begun = to_text(intent.begun)
    table.put(
        {
            **item_key,
            "kind": items.s("delete"),
            "intent": items.s(intent.model_dump_json()),
            keys.GSI5_PK: items.s(keys.DELETES_BEGUN_PK),
            # After the time, the item's own key: two deletes begun at one instant both listed.
            keys.GSI5_SK: items.s(f"{begun}#{item_key[keys.PK]['S']}#{item_key[keys.SK]['S']}"),
        }
    )


def end(table: DynamoTable, intent: DeleteIntent) -> None:
    table.delete(_key(intent))


def begun_before(table: DynamoTable, before: datetime, limit: int) -> list[DeleteIntent]:
    """A Query of the gsi5 partition of deletes (keys only), then the items in one batch read."""
    if limit <= 0:
        return []
    listed = table.query(
        IndexName=keys.GSI5,
        KeyConditionExpression="gsi5pk = :deletes AND gsi5sk <= :before",
        ExpressionAttributeValues={
            ":deletes": items.s(keys.DELETES_BEGUN_PK),
            # '~' sorts after the '#' that ends a time: a delete begun at `before` is in.
            ":before": items.s(to_text(before) + "~"),
        },
        Limit=limit,
    )
    wanted = [
        keys.key(items.required(item, keys.PK), items.required(item, keys.SK))
        for item in islice(listed, limit)
    ]
    # Ended between the listing and the read: left out.
    found = [
        DeleteIntent.model_validate_json(items.required(item, "intent")) for item in table.batch_get(wanted)
    ]
    return sorted(found, key=lambda intent: (intent.begun, intent.key))
