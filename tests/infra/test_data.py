"""The single table: keys, GSIs, on-demand, PITR, TTL, protection by stage."""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk.assertions import Match, Template

from infra.data import Data
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


def test_the_table_has_the_gsi1_index_keyed_gsi1pk_gsi1sk(dev: dict[str, Any]) -> None:
    (index,) = table(dev)["Properties"]["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "gsi1"
    assert index["KeySchema"] == [
        {"AttributeName": "gsi1pk", "KeyType": "HASH"},
        {"AttributeName": "gsi1sk", "KeyType": "RANGE"},
    ]
    assert index["Projection"] == {"ProjectionType": "ALL"}


def test_dev_tables_can_be_deleted_and_prod_tables_cannot(dev: dict[str, Any], prod: dict[str, Any]) -> None:
    assert table(dev)["Properties"]["DeletionProtectionEnabled"] is False
    assert table(dev)["DeletionPolicy"] == "Delete"
    assert table(prod)["Properties"]["DeletionProtectionEnabled"] is True
    assert table(prod)["DeletionPolicy"] == "Retain"


def test_more_global_indexes_are_a_constructor_option() -> None:
    # Given a Data construct asked for two indexes
    stack = Stack()
    Data(stack, "Data", protect=False, global_indexes=("gsi1", "gsi2"))
    # When synthesized / Then both exist with their own key attributes
    Template.from_stack(stack).has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "GlobalSecondaryIndexes": [
                Match.object_like({"IndexName": "gsi1"}),
                Match.object_like(
                    {
                        "IndexName": "gsi2",
                        "KeySchema": [
                            {"AttributeName": "gsi2pk", "KeyType": "HASH"},
                            {"AttributeName": "gsi2sk", "KeyType": "RANGE"},
                        ],
                    }
                ),
            ]
        },
    )
