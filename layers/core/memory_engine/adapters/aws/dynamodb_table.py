"""A thin layer over the low-level DynamoDB client: paging, batch retries, transactions.

Reads that decide a write are strongly consistent. A cancelled transaction raises
`TransactionCancelled` with DynamoDB's per-action reasons, so the store can tell "the dialog
already exists" from "someone else changed the session first".
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from memory_engine.adapters.aws.clients import aws_errors, client, error_code
from memory_engine.adapters.aws.dynamodb_keys import PK, SK, key
from memory_engine.errors import Unavailable

Item = dict[str, Any]
Action = dict[str, Any]

TRANSACTION_LIMIT = 100  # actions per TransactWriteItems
TRANSACTION_BYTES = 4 * 1024 * 1024
_BATCH_GET = 100
_BATCH_WRITE = 25
_BATCH_ROUNDS = 8


class TransactionCancelled(Exception):
    """DynamoDB cancelled a transaction; `reasons` has one entry per action, in order."""

    def __init__(self, reasons: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(", ".join(str(reason.get("Code")) for reason in reasons))
        self.reasons = list(reasons)

    def failed(self, index: int) -> bool:
        """True when action `index` was refused by its condition."""
        return index < len(self.reasons) and self.reasons[index].get("Code") == "ConditionalCheckFailed"

    def any_failed(self) -> bool:
        return any(reason.get("Code") == "ConditionalCheckFailed" for reason in self.reasons)

    def old_item(self, index: int) -> Item | None:
        """The item as it was, for an action sent with ReturnValuesOnConditionCheckFailure."""
        return self.reasons[index].get("Item") if index < len(self.reasons) else None


def put(
    item: Item, condition: str | None = None, values: Item | None = None, return_old: bool = False
) -> Action:
    body: Item = {"Item": item}
    _conditioned(body, condition, values, return_old)
    return {"Put": body}


def update(
    item_key: Item,
    expression: str,
    values: Item | None = None,
    condition: str | None = None,
    names: Mapping[str, str] | None = None,
) -> Action:
    body: Item = {"Key": item_key, "UpdateExpression": expression}
    _conditioned(body, condition, values)
    if names:
        body["ExpressionAttributeNames"] = dict(names)
    return {"Update": body}


def delete(item_key: Item, condition: str | None = None, values: Item | None = None) -> Action:
    body: Item = {"Key": item_key}
    _conditioned(body, condition, values)
    return {"Delete": body}


def _conditioned(body: Item, condition: str | None, values: Item | None, return_old: bool = False) -> None:
    if condition:
        body["ConditionExpression"] = condition
    if values:
        body["ExpressionAttributeValues"] = values
    if return_old:
        body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"


def action_key(action: Action) -> Item:
    body = next(iter(action.values()))
    if "Key" in body:
        return dict(body["Key"])
    return {PK: body["Item"][PK], SK: body["Item"][SK]}


def backoff(attempt: int) -> None:
    """Full-jitter exponential backoff, capped at a quarter second."""
    time.sleep(random.uniform(0, min(0.25, 0.005 * 2**attempt)))


class DynamoTable:
    """One table; the client is built on first use (never in the constructor)."""

    def __init__(self, name: str, region: str | None = None, dynamodb: Any = None) -> None:
        self.name = name
        self._region = region
        self._client = dynamodb

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = client("dynamodb", self._region)
        return self._client

    def _errors(self) -> Any:
        return aws_errors(
            "The DynamoDB table",
            "Create it (see docs/dynamodb.md) or fix MEMORY_ENGINE_TABLE_NAME.",
            resource=self.name,
        )

    def get(self, pk: str, sk: str) -> Item | None:
        with self._errors():
            response = self.client.get_item(TableName=self.name, Key=key(pk, sk), ConsistentRead=True)
        item: Item | None = response.get("Item")
        return item

    def query(self, **arguments: Any) -> Iterator[Item]:
        """Every item the query matches, page after page."""
        yield from self._pages("query", arguments)

    def scan(self, **arguments: Any) -> Iterator[Item]:
        yield from self._pages("scan", arguments)

    def _pages(self, operation: str, arguments: dict[str, Any]) -> Iterator[Item]:
        request = {"TableName": self.name, **arguments}
        while True:
            with self._errors():
                response = getattr(self.client, operation)(**request)
            yield from response.get("Items", [])
            last = response.get("LastEvaluatedKey")
            if not last:
                return
            request["ExclusiveStartKey"] = last

    def batch_get(self, item_keys: Sequence[Item], attributes: Sequence[str] = ()) -> list[Item]:
        """The items that exist among `item_keys` (strongly consistent), in no particular order;
        only the named `attributes` of each when some are named."""
        unique = list({(k[PK]["S"], k[SK]["S"]): k for k in item_keys}.values())
        projection: Item = {}
        if attributes:
            names = {f"#a{number}": name for number, name in enumerate(attributes)}
            projection = {"ProjectionExpression": ", ".join(names), "ExpressionAttributeNames": names}
        found: list[Item] = []
        for start in range(0, len(unique), _BATCH_GET):
            pending: list[Item] = unique[start : start + _BATCH_GET]
            for attempt in range(_BATCH_ROUNDS):
                request = {self.name: {"Keys": pending, "ConsistentRead": True, **projection}}
                with self._errors():
                    response = self.client.batch_get_item(RequestItems=request)
                found.extend(response.get("Responses", {}).get(self.name, []))
                pending = response.get("UnprocessedKeys", {}).get(self.name, {}).get("Keys", [])
                if not pending:
                    break
                backoff(attempt + 2)
            if pending:
                raise Unavailable("The DynamoDB table is throttling reads; retry shortly.")
        return found

    def batch_write(self, puts: Sequence[Item] = (), deletes: Sequence[Item] = ()) -> None:
        """Unconditional puts and deletes, 25 a call, retrying what DynamoDB left unprocessed."""
        requests = [{"PutRequest": {"Item": item}} for item in puts]
        requests += [{"DeleteRequest": {"Key": item_key}} for item_key in deletes]
        for start in range(0, len(requests), _BATCH_WRITE):
            pending = requests[start : start + _BATCH_WRITE]
            for attempt in range(_BATCH_ROUNDS):
                with self._errors():
                    response = self.client.batch_write_item(RequestItems={self.name: pending})
                pending = response.get("UnprocessedItems", {}).get(self.name, [])
                if not pending:
                    break
                backoff(attempt + 2)
            if pending:
                raise Unavailable("The DynamoDB table is throttling writes; retry shortly.")

    def put(self, item: Item) -> None:
        with self._errors():
            self.client.put_item(TableName=self.name, Item=item)

    def delete(self, item_key: Item) -> None:
        """One DeleteItem; deleting an item that is not there succeeds."""
        with self._errors():
            self.client.delete_item(TableName=self.name, Key=item_key)

    def put_if(self, item: Item, condition: str, values: Item | None = None) -> bool:
        """One conditional PutItem; False when the condition refused it."""
        from botocore.exceptions import ClientError

        arguments: Item = {"ConditionExpression": condition}
        if values:
            arguments["ExpressionAttributeValues"] = values
        try:
            with self._errors():
                self.client.put_item(TableName=self.name, Item=item, **arguments)
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def update_existing(
        self,
        item_key: Item,
        expression: str,
        values: Item | None = None,
        names: Mapping[str, str] | None = None,
    ) -> bool:
        """One UpdateItem, only if the item exists; False when it does not."""
        from botocore.exceptions import ClientError

        named: dict[str, Any] = {"ExpressionAttributeValues": values} if values else {}
        if names:
            named["ExpressionAttributeNames"] = dict(names)
        try:
            with self._errors():
                self.client.update_item(
                    TableName=self.name,
                    Key=item_key,
                    UpdateExpression=expression,
                    ConditionExpression="attribute_exists(pk)",
                    **named,
                )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def transact(self, actions: Sequence[Action]) -> None:
        """All actions or none: one TransactWriteItems call (botocore makes its retries idempotent
        with a ClientRequestToken). Raises TransactionCancelled when DynamoDB refuses it."""
        if len(actions) > TRANSACTION_LIMIT:
            raise ValueError(f"{len(actions)} actions in one transaction; DynamoDB takes {TRANSACTION_LIMIT}")
        named = [
            {kind: {"TableName": self.name, **body} for kind, body in action.items()} for action in actions
        ]
        from botocore.exceptions import ClientError

        try:
            with self._errors():
                self.client.transact_write_items(TransactItems=named)
        except ClientError as error:
            if error_code(error) != "TransactionCanceledException":
                raise
            reasons = error.response.get("CancellationReasons") or []
            if not reasons:
                raise Unavailable(
                    f"DynamoDB cancelled a transaction ({error_code(error)}); retry shortly."
                ) from error
            raise TransactionCancelled(reasons) from error
