"""The scopes' fact counts on DynamoDB: a count item per scope, written in the transaction of each
fact put or delete, read by one Query and one BatchGetItem a page; facts without a TTL attribute
(DynamoDB's own expiry would delete a fact outside that transaction and leave its count too
high); and a table written before the counts counted by the backfill."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws.dynamodb_fact_counts import count_key
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.models.domain import FACT_KIND, scope_key
from tests.aws.conftest import AwsCalls
from tests.contract.builders import TENANT, append_turns, make_memory, make_session
from tests.fakes.aws import REGION, create_table, moto_aws

ANN = {"user_id": "ann"}
LONG = "".join(chr(0x4E00 + (n * 7919) % 20_000) for n in range(400_000))  # overflows into parts


@pytest.fixture
def store() -> Iterator[DynamoDbStore]:
    with moto_aws():
        yield DynamoDbStore(create_table(), REGION)


def fact(scope: dict[str, str] = ANN, **fields: Any) -> Any:
    return make_memory(
        session_uuid="",
        parent=scope_key(scope),
        scope=scope,
        metadata={"kind": FACT_KIND},
        source_dialog_uuids=[],
        **fields,
    )


def item(store: DynamoDbStore, pk: str, sk: str) -> dict[str, Any]:
    found = store.table.get(pk, sk)
    assert found is not None
    return found


def counts(store: DynamoDbStore) -> dict[str, int]:
    return {s.thread: s.facts for s in store.fact_scopes(TENANT)}


def test_an_expiring_fact_carries_no_ttl_while_an_expiring_engine_memory_does(store: DynamoDbStore) -> None:
    # Given an expiring fact (long enough to overflow into parts) and an expiring engine memory
    later = datetime.now(UTC) + timedelta(days=1)
    temporary = fact(expires_at=later, source_text=LONG)
    append_turns(store, make_session(), "d1")
    memory = make_memory("d1", expires_at=later)
    assert store.save_memory(temporary) and store.save_memory(memory)

    # Then only the sweep removes the fact (with its count): neither it nor its parts have a TTL
    stored = item(store, keys.memory_pk(TENANT, temporary.memory_id), keys.MEMORY_SK)
    assert keys.TTL_ATTRIBUTE not in stored and "expires_at" in stored and stored.get("parts")
    parts = store.table.query(
        KeyConditionExpression="pk = :pk AND begins_with(sk, :part)",
        ExpressionAttributeValues={":pk": stored["pk"], ":part": {"S": "PART#"}},
    )
    assert [part for part in parts if keys.TTL_ATTRIBUTE in part] == []
    engine_item = item(store, keys.memory_pk(TENANT, memory.memory_id), keys.MEMORY_SK)
    assert keys.TTL_ATTRIBUTE in engine_item


def test_a_page_of_scopes_reads_one_count_item_a_scope_however_many_facts_it_holds(
    store: DynamoDbStore,
) -> None:
    # Given two scopes, one with 30 facts and one with a single fact
    for _ in range(30):
        assert store.save_memory(fact())
    assert store.save_memory(fact({"user_id": "bo"}))
    calls = AwsCalls()
    calls.watch("dynamodb")

    # When the page of scopes is read
    found = counts(store)

    # Then both are counted from one Query of the count items' keys and one batch of two items
    assert found == {scope_key(ANN): 30, scope_key({"user_id": "bo"}): 1}
    assert calls.of("dynamodb") == {"Query": 1, "BatchGetItem": 1}


def test_a_scopes_last_fact_deletes_its_count_item(store: DynamoDbStore) -> None:
    only = fact()
    assert store.save_memory(only)
    assert store.table.get(*(value["S"] for value in count_key(TENANT, scope_key(ANN)).values()))

    store.delete_memory(TENANT, only.memory_id)

    assert store.table.get(*(value["S"] for value in count_key(TENANT, scope_key(ANN)).values())) is None
    assert counts(store) == {}


def test_a_table_written_before_the_counts_is_counted_by_the_backfill(store: DynamoDbStore) -> None:
    # Given facts stored as before the counts: no count items, and an expiring fact with a TTL
    later = datetime.now(UTC) + timedelta(days=1)
    old = [fact(), fact(), fact({"user_id": "bo"}), fact(expires_at=later, source_text=LONG)]
    for memory in old:
        assert store.save_memory(memory)
    for thread in (scope_key(ANN), scope_key({"user_id": "bo"})):
        store.table.client.delete_item(TableName=store.table.name, Key=count_key(TENANT, thread))
    pk = keys.memory_pk(TENANT, old[-1].memory_id)
    stored = item(store, pk, keys.MEMORY_SK)
    ttl = {keys.TTL_ATTRIBUTE: {"N": "1999999999"}}
    for sk in [
        keys.MEMORY_SK,
        *(f"PART#{n:03d}#{keys.MEMORY_SK}" for n in range(1, int(stored["parts"]["N"]) + 1)),
    ]:
        store.table.client.update_item(
            TableName=store.table.name,
            Key=keys.key(pk, sk),
            UpdateExpression="SET #ttl = :ttl",
            ExpressionAttributeNames={"#ttl": keys.TTL_ATTRIBUTE},
            ExpressionAttributeValues={":ttl": ttl[keys.TTL_ATTRIBUTE]},
        )
    assert counts(store) == {}

    # When the backfill runs (twice: it sets each count to what it finds)
    assert store.backfill_fact_counts() == 2
    assert store.backfill_fact_counts() == 2

    # Then each scope is counted with its scope, and the old facts carry no TTL any more
    assert [(s.scope, s.facts) for s in store.fact_scopes(TENANT)] == [(ANN, 3), ({"user_id": "bo"}, 1)]
    assert keys.TTL_ATTRIBUTE not in item(store, pk, keys.MEMORY_SK)
    assert keys.TTL_ATTRIBUTE not in item(store, pk, f"PART#001#{keys.MEMORY_SK}")
    # And the counts move on from there
    store.delete_memory(TENANT, old[0].memory_id)
    assert counts(store) == {scope_key(ANN): 2, scope_key({"user_id": "bo"}): 1}
