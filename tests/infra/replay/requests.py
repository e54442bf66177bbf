"""What AWS authorizes for one API request: its IAM actions, on which resources, with which
condition keys. A DynamoDB transaction is its items' own actions (PutItem, UpdateItem,
DeleteItem, ConditionCheckItem) on their tables; `dynamodb:LeadingKeys` is the partition key of
the items a request touches; an index is `<table ARN>/index/<name>`.

A service the functions are not expected to call maps to its action on `*`, which no role of
theirs allows: the replay then fails, naming it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

from tests.infra.replay.policy import Authorization

PARTITION_KEY = "pk"
LEADING_KEYS = "dynamodb:LeadingKeys"
# DynamoDB's actions inside TransactWriteItems / TransactGetItems.
TRANSACT_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
    "Get": "dynamodb:GetItem",
}
# The API's operation name where its IAM action is named otherwise.
IAM_ACTIONS = {"lambda:Invoke": "lambda:InvokeFunction"}
_EQUALS = re.compile(r"(#?\w+)\s*=\s*(:\w+)")


class Where:
    """The account and region the requests are made in, and how a secret's name becomes its ARN."""

    def __init__(self, account: str, region: str, secret_arn: Callable[[str], str]) -> None:
        self.account, self.region, self.secret_arn = account, region, secret_arn

    def arn(self, service: str, resource: str) -> str:
        return f"arn:aws:{service}:{self.region}:{self.account}:{resource}"

    def role_arn(self, name: str) -> str:
        return f"arn:aws:iam::{self.account}:role/{name}"


def authorizations(action: str, body: bytes, path: str, where: Where) -> list[Authorization]:
    """The authorizations behind one request (`action` is `service:Operation`, as moto names it)."""
    service, _, operation = action.partition(":")
    payload = _json(body)
    if service == "dynamodb":
        return _dynamodb(operation, payload, where)
    if service == "sqs":
        queue = str(payload.get("QueueUrl") or payload.get("QueueName", "")).rsplit("/", 1)[-1]
        return [Authorization(action, where.arn("sqs", queue))]
    if service == "lambda" and operation == "Invoke":
        function = unquote(path.split("?")[0].rstrip("/").rsplit("/", 2)[-2])
        arn = function if function.startswith("arn:") else where.arn("lambda", f"function:{function}")
        return [Authorization(IAM_ACTIONS[action], arn)]
    if service == "sagemaker" and operation == "InvokeEndpoint":
        endpoint = unquote(path.split("?")[0].rstrip("/").rsplit("/", 2)[-2]).lower()
        return [Authorization(action, where.arn("sagemaker", f"endpoint/{endpoint}"))]
    if service == "secretsmanager":
        return [Authorization(action, where.secret_arn(str(payload.get("SecretId", ""))))]
    return [Authorization(IAM_ACTIONS.get(action, action), "*")]


def _json(body: bytes) -> dict[str, Any]:
    try:
        found = json.loads(body or b"{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _table(where: Where, name: str, index: str | None = None) -> str:
    arn = where.arn("dynamodb", f"table/{name}")
    return f"{arn}/index/{index}" if index else arn


def _leading(item_key: Mapping[str, Any] | None) -> list[str]:
    value = (item_key or {}).get(PARTITION_KEY, {})
    return [value["S"]] if isinstance(value, dict) and "S" in value else []


def _dynamodb(operation: str, payload: dict[str, Any], where: Where) -> list[Authorization]:
    action = f"dynamodb:{operation}"
    if operation in {"TransactWriteItems", "TransactGetItems"}:
        found = []
        for entry in payload.get("TransactItems", []):
            ((kind, body),) = entry.items()
            found.append(
                Authorization(
                    TRANSACT_ACTIONS[kind],
                    _table(where, body["TableName"]),
                    {LEADING_KEYS: _leading(body.get("Key") or body.get("Item"))},
                )
            )
        return found
    if operation in {"BatchGetItem", "BatchWriteItem"}:
        found = []
        for table, wanted in payload.get("RequestItems", {}).items():
            requests = wanted["Keys"] if operation == "BatchGetItem" else wanted
            item_keys = [
                request
                if operation == "BatchGetItem"
                else (
                    request.get("PutRequest", {}).get("Item") or request.get("DeleteRequest", {}).get("Key")
                )
                for request in requests
            ]
            leading = sorted({key for item_key in item_keys for key in _leading(item_key)})
            found.append(Authorization(action, _table(where, table), {LEADING_KEYS: leading}))
        return found
    resource = _table(where, str(payload.get("TableName", "")), payload.get("IndexName"))
    if operation == "Query":
        return [Authorization(action, resource, {LEADING_KEYS: _query_leading_key(payload)})]
    if operation in {"GetItem", "PutItem", "UpdateItem", "DeleteItem"}:
        leading = _leading(payload.get("Key") or payload.get("Item"))
        return [Authorization(action, resource, {LEADING_KEYS: leading})]
    return [Authorization(action, resource)]


def _query_leading_key(payload: Mapping[str, Any]) -> list[str]:
    """The value the key condition sets the partition key to (its first equality)."""
    found = _EQUALS.search(str(payload.get("KeyConditionExpression", "")))
    if not found:
        return []
    value = payload.get("ExpressionAttributeValues", {}).get(found.group(2), {})
    return [value["S"]] if "S" in value else []
