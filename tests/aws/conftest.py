"""The AWS adapters on moto: an engine wired to them, and a record of the AWS calls it makes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from memory_engine.adapters.aws import clients
from memory_engine.engine import Engine
from tests.fakes.aws import REGION
from tests.fakes.engine import aws_engine

DYNAMODB_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})


class AwsCalls:
    """Counts API calls per service and operation, from botocore's own `before-call` events, and
    the items DynamoDB's scans examined (`ScannedCount`: what a Scan pays for)."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self.scanned = 0

    def watch(self, service: str) -> None:
        events = clients.client(service, REGION).meta.events
        events.register(f"before-call.{service}.*", self._count)
        if service == "dynamodb":
            events.register("after-call.dynamodb.Scan", self._scanned)

    def _count(self, model: Any, **_: Any) -> None:
        self.counts[(model.service_model.service_name, model.name)] += 1

    def _scanned(self, parsed: dict[str, Any], **_: Any) -> None:
        self.scanned += int(parsed.get("ScannedCount", 0))

    def reset(self) -> None:
        self.counts.clear()
        self.scanned = 0

    def dynamodb_writes(self) -> int:
        return sum(
            n
            for (service, name), n in self.counts.items()
            if service == "dynamodb" and name in DYNAMODB_WRITES
        )

    def of(self, service: str) -> dict[str, int]:
        return {name: n for (svc, name), n in self.counts.items() if svc == service}


@pytest.fixture
def engine() -> Iterator[Engine]:
    with aws_engine() as engine:
        yield engine


@pytest.fixture
def aws_calls(engine: Engine) -> AwsCalls:
    calls = AwsCalls()
    calls.watch("dynamodb")
    calls.watch("sqs")
    return calls
