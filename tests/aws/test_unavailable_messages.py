"""A DynamoDB or SQS failure reaches API callers as a 503 message: it names the dependency and what
to do, never the table, the queue URL or the account (docs/security.md, Errors and logs); the log names them
for the operator."""

from __future__ import annotations

import logging
import types
from collections.abc import Iterator
from typing import Any

import pytest

from memory_engine.adapters.aws import clients
from memory_engine.engine import Engine
from memory_engine.errors import Unavailable
from memory_engine.models.messages import ExtractionJob
from tests.fakes.aws import REGION, TABLE


def throttled(**_: Any) -> tuple[Any, dict[str, Any]]:
    error = {"Code": "ThrottlingException", "Message": "Rate exceeded"}
    return types.SimpleNamespace(status_code=400), {"Error": error, "ResponseMetadata": {}}


@pytest.fixture
def every_call_throttled(engine: Engine) -> Iterator[None]:
    hooks = [clients.client(service, REGION).meta.events for service in ("dynamodb", "sqs")]
    for events, service in zip(hooks, ("dynamodb", "sqs"), strict=True):
        events.register(f"before-call.{service}", throttled, unique_id="throttled")
    yield
    for events, service in zip(hooks, ("dynamodb", "sqs"), strict=True):
        events.unregister(f"before-call.{service}", unique_id="throttled")


def test_a_throttled_table_is_unavailable_without_naming_the_table_except_in_the_log(
    engine: Engine, every_call_throttled: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "memory_engine.aws"), pytest.raises(Unavailable) as raised:
        engine.store.get_session("acme", "s1")

    assert "ThrottlingException" in raised.value.message and "retry" in raised.value.message
    assert TABLE not in raised.value.message
    assert [record.resource for record in caplog.records] == [TABLE]  # type: ignore[attr-defined]


def test_a_throttled_queue_is_unavailable_without_naming_the_queue_or_the_account(
    engine: Engine, every_call_throttled: None, caplog: pytest.LogCaptureFixture
) -> None:
    url: str = engine.queue.queue_url  # type: ignore[attr-defined]

    with caplog.at_level(logging.WARNING, "memory_engine.aws"), pytest.raises(Unavailable) as raised:
        engine.queue.send(ExtractionJob(tenant="acme", session_uuid="s1"))

    assert "SQS" in raised.value.message and "retry" in raised.value.message
    assert not [part for part in url.split("/")[-2:] if part in raised.value.message]
    assert [record.resource for record in caplog.records] == [url]  # type: ignore[attr-defined]
