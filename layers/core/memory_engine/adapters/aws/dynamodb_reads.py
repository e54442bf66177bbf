"""Reading records back from the table, overflow parts included."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws.dynamodb_table import DynamoTable, Item
from memory_engine.models.domain import Memory, Turn

Record = TypeVar("Record")


def with_parts(
    table: DynamoTable, found: Sequence[Item], decode: Callable[[Item, list[Item]], Record]
) -> list[Record]:
    """Decode items, fetching the overflow parts of those that have some in one batch."""
    wanted = [part_key for item in found for part_key in items.part_keys(item)]
    parts_by_owner: dict[tuple[str, str], list[Item]] = {}
    for part in table.batch_get(wanted) if wanted else []:
        owner_sk = part[keys.SK]["S"].split("#", 2)[2]
        parts_by_owner.setdefault((part[keys.PK]["S"], owner_sk), []).append(part)
    return [decode(item, parts_by_owner.get((item[keys.PK]["S"], item[keys.SK]["S"]), [])) for item in found]


def turns(table: DynamoTable, found: Iterable[Item]) -> list[Turn]:
    return with_parts(table, list(found), items.turn_from)


def memories(table: DynamoTable, found: Iterable[Item], vectors: bool = True) -> list[Memory]:
    decode = items.memory_from if vectors else items.memory_without_vectors_from
    return with_parts(table, list(found), decode)


def turn_items(table: DynamoTable, tenant: str, session_uuid: str, dialog_uuids: Iterable[str]) -> list[Item]:
    pk = keys.session_pk(tenant, session_uuid)
    return table.batch_get([keys.key(pk, keys.turn_sk(uuid)) for uuid in dialog_uuids])


def memory_items(table: DynamoTable, tenant: str, memory_ids: Iterable[str]) -> list[Item]:
    return table.batch_get(
        [keys.key(keys.memory_pk(tenant, memory_id), keys.MEMORY_SK) for memory_id in memory_ids]
    )


def session_turn_items(table: DynamoTable, tenant: str, session_uuid: str) -> list[Item]:
    """Every turn item of the session (strongly consistent), in no particular order."""
    return list(
        table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={
                ":pk": items.s(keys.session_pk(tenant, session_uuid)),
                ":prefix": items.s(keys.TURN_PREFIX),
            },
            ConsistentRead=True,
        )
    )


def buffered_count(table: DynamoTable, tenant: str, session_uuid: str) -> int:
    session = table.get(keys.session_pk(tenant, session_uuid), keys.SESSION_SK)
    return 0 if session is None else items.number(session, "buffered")


def partition(table: DynamoTable, pk: str) -> list[Item]:
    """Every item of one partition (strongly consistent)."""
    return list(
        table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": items.s(pk)},
            ConsistentRead=True,
        )
    )


def keys_of(found: Iterable[Item]) -> list[dict[str, Any]]:
    return [keys.key(item[keys.PK]["S"], item[keys.SK]["S"]) for item in found]
