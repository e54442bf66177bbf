"""A moto DynamoDB table for the key store contract, keyed like the engine's table (pk, sk).

After the merge with the AWS backend this can use its `create_table()` helper instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

TABLE = "memory-engine-test"
REGION = "us-east-1"
_FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
}


@contextmanager
def mocked_key_table() -> Iterator[tuple[str, Any]]:
    """(table name, client) on a fresh mocked table, for the duration of the block."""
    import boto3
    from moto import mock_aws

    with mock.patch.dict(os.environ, _FAKE_CREDENTIALS), mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        client.create_table(
            TableName=TABLE,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
        )
        yield TABLE, client


def mocked_usage_plan() -> tuple[str, Any]:
    """(usage plan id, API Gateway client) of a fresh usage plan; call inside `mocked_key_table()`."""
    import boto3

    apigateway = boto3.client("apigateway", region_name=REGION)
    plan = apigateway.create_usage_plan(
        name="memory-engine-test-per-key", throttle={"rateLimit": 25, "burstLimit": 50}
    )
    return plan["id"], apigateway


def usage_plan_values(apigateway: Any, usage_plan_id: str) -> set[str]:
    """The API key values in the usage plan."""
    return {item["value"] for item in apigateway.get_usage_plan_keys(usagePlanId=usage_plan_id)["items"]}


def api_key_values(apigateway: Any) -> set[str]:
    """Every API key value of the account, in a plan or not."""
    return {item["value"] for item in apigateway.get_api_keys(includeValues=True)["items"]}
