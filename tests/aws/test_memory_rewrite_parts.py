"""A memory rewritten smaller on DynamoDB keeps its overflow part count: every part is put over,
none deleted, so the roles that rewrite records (bank PATCH, generate) need no DeleteItem."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from tests.aws.conftest import AwsCalls
from tests.contract.builders import TENANT, append_turns, make_memory, make_session
from tests.fakes.aws import REGION, create_table, moto_aws

LONG = "".join(chr(0x4E00 + (n * 7919) % 20_000) for n in range(400_000))  # overflows into parts


@pytest.fixture
def store() -> Iterator[DynamoDbStore]:
    with moto_aws():
        yield DynamoDbStore(create_table(), REGION)


def item(store: DynamoDbStore, pk: str, sk: str) -> dict[str, Any]:
    found = store.table.get(pk, sk)
    assert found is not None
    return found


def test_a_rewrite_that_needs_fewer_parts_puts_over_every_part_and_deletes_none(
    store: DynamoDbStore,
) -> None:
    # Given a memory long enough for several overflow parts
    append_turns(store, make_session(), "d1")
    memory = make_memory("d1", source_text=LONG)
    assert store.save_memory(memory)
    pk = keys.memory_pk(TENANT, memory.memory_id)
    before = int(item(store, pk, keys.MEMORY_SK)["parts"]["N"])
    assert before >= 2
    calls = AwsCalls()
    calls.watch("dynamodb")

    # When it is rewritten short (it would fit one item)
    assert store.update_memory(memory.model_copy(update={"source_text": "A short day."}))

    # Then it keeps its part count, every part put over, and nothing is deleted; it reads back whole
    assert int(item(store, pk, keys.MEMORY_SK)["parts"]["N"]) == before
    assert "DeleteItem" not in calls.of("dynamodb")
    stored = store.get_memory(TENANT, memory.memory_id)
    assert stored is not None and stored.source_text == "A short day."
    # And a delete takes every part with it
    store.delete_memory(TENANT, memory.memory_id)
    assert (
        list(
            store.table.query(KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": pk}})
        )
        == []
    )
