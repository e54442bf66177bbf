"""The DynamoDB single table: sessions, turns, memories, API keys (the system of record)."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

PARTITION_KEY = "pk"
SORT_KEY = "sk"
TTL_ATTRIBUTE = "ttl"
KEY_PREFIX = "KEY#"  # partition of API-key items (memory_engine.adapters.dynamodb_keys)

READ_ACTIONS = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
WRITE_ACTIONS = (
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",  # TransactWriteItems is authorised per item action
)


class Data(Construct):
    """On-demand table with PITR and TTL; `global_indexes` names GSIs keyed `<name>pk`/`<name>sk`."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        protect: bool,
        global_indexes: Sequence[str] = ("gsi1",),
    ) -> None:
        super().__init__(scope, construct_id)
        string = dynamodb.AttributeType.STRING
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name=PARTITION_KEY, type=string),
            sort_key=dynamodb.Attribute(name=SORT_KEY, type=string),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            deletion_protection=protect,
            removal_policy=RemovalPolicy.RETAIN if protect else RemovalPolicy.DESTROY,
        )
        self.index_names = tuple(global_indexes)
        for name in self.index_names:
            self.table.add_global_secondary_index(
                index_name=name,
                partition_key=dynamodb.Attribute(name=f"{name}pk", type=string),
                sort_key=dynamodb.Attribute(name=f"{name}sk", type=string),
                projection_type=dynamodb.ProjectionType.ALL,
            )

    def _arns(self) -> list[str]:
        # The indexes one by one: no `index/*` wildcard in anyone's policy.
        table_arn = self.table.table_arn
        return [table_arn, *(f"{table_arn}/index/{name}" for name in self.index_names)]

    def grant_read(self, grantee: iam.IGrantable) -> None:
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=list(READ_ACTIONS), resources=self._arns())
        )

    def grant_write(self, grantee: iam.IGrantable) -> None:
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=list(WRITE_ACTIONS), resources=[self.table.table_arn])
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
