"""The DynamoDB single table: sessions, turns, memories, API keys (the system of record)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

PARTITION_KEY = "pk"
SORT_KEY = "sk"
TTL_ATTRIBUTE = "ttl"
KEY_PREFIX = "KEY#"  # partition of API-key items (memory_engine.adapters.aws.dynamodb_api_keys)
STRING = dynamodb.AttributeType.STRING
PROJECTIONS = {
    "ALL": dynamodb.ProjectionType.ALL,
    "KEYS_ONLY": dynamodb.ProjectionType.KEYS_ONLY,
}

READ_ACTIONS = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
# TransactWriteItems is authorized per item action (Put, Update, Delete); the store never sends a
# ConditionCheck, so no role holds ConditionCheckItem.
WRITE_ACTIONS = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")


class Data(Construct):
    """On-demand table with PITR and TTL, and exactly the indexes the engine's store queries.

    The indexes come from `create_table_request()` of the DynamoDB adapter, the one definition the
    store's tests create on moto: the deployed table cannot drift from what the code expects.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, protect: bool, existing: str | None = None
    ) -> None:
        super().__init__(scope, construct_id)
        from memory_engine.adapters.aws.dynamodb_keys import create_table_request

        definition = create_table_request("memory-engine")
        self.index_names = tuple(
            index["IndexName"]
            for kind in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes")
            for index in definition.get(kind, [])
        )
        if existing:
            # The table an earlier deployment of the stage kept (`cdk destroy` retains it): used as
            # it is, with its data, indexes, PITR, TTL and deletion protection; nothing is created.
            self.table: dynamodb.ITable = dynamodb.Table.from_table_name(self, "Table", existing)
            return
        table = dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name=PARTITION_KEY, type=STRING),
            sort_key=dynamodb.Attribute(name=SORT_KEY, type=STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            deletion_protection=protect,
            removal_policy=RemovalPolicy.RETAIN if protect else RemovalPolicy.DESTROY,
        )
        for index in definition.get("LocalSecondaryIndexes", []):
            _, sort_key = _keys(index)
            table.add_local_secondary_index(
                index_name=index["IndexName"],
                sort_key=dynamodb.Attribute(name=sort_key, type=STRING),
                projection_type=PROJECTIONS[index["Projection"]["ProjectionType"]],
            )
        for index in definition.get("GlobalSecondaryIndexes", []):
            partition_key, sort_key = _keys(index)
            table.add_global_secondary_index(
                index_name=index["IndexName"],
                partition_key=dynamodb.Attribute(name=partition_key, type=STRING),
                sort_key=dynamodb.Attribute(name=sort_key, type=STRING),
                projection_type=PROJECTIONS[index["Projection"]["ProjectionType"]],
            )
        self.table = table

    def _arns(self) -> list[str]:
        # The indexes one by one: no `index/*` wildcard in anyone's policy.
        table_arn = self.table.table_arn
        return [table_arn, *(f"{table_arn}/index/{name}" for name in self.index_names)]

    def grant(self, grantee: iam.IGrantable, actions: Iterable[str]) -> None:
        """The table actions named, no others: reads in one statement (a Query on the table and
        each of its indexes; GetItem and BatchGetItem on the table), writes in another."""
        wanted = set(actions)
        reads = [action for action in READ_ACTIONS if action in wanted]
        writes = [action for action in WRITE_ACTIONS if action in wanted]
        if wanted - set(reads) - set(writes):
            raise ValueError(f"not a table action of this stack: {sorted(wanted - set(reads) - set(writes))}")
        table_arn = self.table.table_arn
        if reads:
            resources = self._arns() if "dynamodb:Query" in reads else [table_arn]
            grantee.grant_principal.add_to_principal_policy(
                iam.PolicyStatement(actions=reads, resources=resources)
            )
        if writes:
            grantee.grant_principal.add_to_principal_policy(
                iam.PolicyStatement(actions=writes, resources=[table_arn])
            )

    def grant_buffer_scan(self, grantee: iam.IGrantable) -> None:
        """Scan of the buffered-turns index only (gsi1, sparse): what the worker's sweep reads."""
        from memory_engine.adapters.aws.dynamodb_keys import GSI1

        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=["dynamodb:Scan"], resources=[f"{self.table.table_arn}/index/{GSI1}"])
        )

    def grant_key_lookup(self, grantee: iam.IGrantable) -> None:
        """GetItem of API-key items only: the authorizer can read no session, turn or memory."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["dynamodb:GetItem"],
                resources=[self.table.table_arn],
                conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{KEY_PREFIX}*"]}},
            )
        )


def _keys(index: dict[str, Any]) -> tuple[str, str]:
    by_type = {part["KeyType"]: part["AttributeName"] for part in index["KeySchema"]}
    return by_type["HASH"], by_type["RANGE"]
