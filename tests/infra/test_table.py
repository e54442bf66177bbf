"""The single table: keys, GSIs, on-demand, PITR, TTL, protection by stage."""

from __future__ import annotations

from typing import Any

from memory_engine.adapters.aws.dynamodb_keys import create_table_request
from tests.infra import cfn


def table(template: dict[str, Any]) -> dict[str, Any]:
    (body,) = cfn.resources(template, "AWS::DynamoDB::Table").values()
    return dict(body)


def test_the_table_is_keyed_pk_sk_on_demand_with_pitr_and_ttl(dev: dict[str, Any]) -> None:
    properties = table(dev)["Properties"]
    assert properties["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert properties["BillingMode"] == "PAY_PER_REQUEST"
    assert properties["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert properties["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    assert properties["SSESpecification"]["SSEEnabled"] is True


def test_the_table_has_exactly_the_indexes_the_store_is_tested_with(dev: dict[str, Any]) -> None:
    # Given the table definition the DynamoDB store's tests create on moto
    expected = create_table_request("any")
    properties = table(dev)["Properties"]
    # Then the deployed table has the same indexes, keys and projections
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        deployed = {index["IndexName"]: index for index in properties.get(kind, [])}
        wanted = {index["IndexName"]: index for index in expected.get(kind, [])}
        assert deployed.keys() == wanted.keys()
        for name, index in wanted.items():
            assert deployed[name]["KeySchema"] == index["KeySchema"]
            assert deployed[name]["Projection"]["ProjectionType"] == index["Projection"]["ProjectionType"]


def test_dev_tables_can_be_deleted_and_prod_tables_cannot(dev: dict[str, Any], prod: dict[str, Any]) -> None:
    assert table(dev)["Properties"]["DeletionProtectionEnabled"] is False
    assert table(dev)["DeletionPolicy"] == "Delete"
    assert table(prod)["Properties"]["DeletionProtectionEnabled"] is True
    assert table(prod)["DeletionPolicy"] == "Retain"


def test_expiring_memories_carry_the_attribute_the_table_expires_on(dev: dict[str, Any]) -> None:
    # Given a memory that expires, as the DynamoDB store writes it
    from datetime import UTC, datetime

    from memory_engine.adapters.aws import dynamodb_keys as keys
    from memory_engine.adapters.aws.dynamodb_items import memory_item
    from memory_engine.models.domain import Memory, MemoryFields

    expires = datetime(2027, 1, 1, tzinfo=UTC)
    memory = Memory(
        tenant="t",
        memory_id="20261206_000000_000000",
        session_uuid="",
        parent_session_uuid="scope:" + "0" * 40,
        fields=MemoryFields(summary="The user is in Busan this week."),
        source_dialog_uuids=[],
        first_seq=0,
        last_seq=0,
        created_at=datetime(2026, 12, 6, tzinfo=UTC),
        expires_at=expires,
    )
    item, _ = memory_item(memory)
    # Then the item carries the table's TTL attribute, in epoch seconds, after the expiry itself
    # (the grace in which the sweep purges the search index first), and the sweep's gsi5 keys
    ttl = table(dev)["Properties"]["TimeToLiveSpecification"]["AttributeName"]
    assert int(item[ttl]["N"]) == int(expires.timestamp()) + keys.TTL_GRACE_SECONDS
    assert keys.GSI5_PK in item and item[keys.GSI5_SK]["S"].startswith("2027-01-01T00:00:00")
