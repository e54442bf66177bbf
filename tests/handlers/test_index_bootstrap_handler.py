"""The custom resource's on_event: creates the index, retries while access propagates, and raises
what the Provider framework must report as FAILED."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from functions.index_bootstrap import handler
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.composition import wiring
from memory_engine.errors import Unavailable
from tests.fakes.engine import fake_engine


class Context:
    def __init__(self, remaining_ms: int) -> None:
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


class BootstrappableIndex(LocalSearchIndex):
    """A local index that must be created first, and refuses `failures` times before it can be."""

    def __init__(self, failures: int = 0) -> None:
        super().__init__()
        self.failures = failures
        self.calls = 0

    def ensure_index(self) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise PermissionError("403: data access policy not propagated yet")


def provider_event(request_type: str) -> dict[str, Any]:
    """What CDK's Provider framework passes its on_event handler (the CloudFormation request)."""
    event: dict[str, Any] = {
        "RequestType": request_type,
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/MemoryEngine-dev/1",
        "RequestId": "request-1",
        "LogicalResourceId": "SearchIndex",
        "ResourceType": "AWS::CloudFormation::CustomResource",
        "ResourceProperties": {"Index": "memories", "Dimension": "384"},
    }
    if request_type != "Create":
        event["PhysicalResourceId"] = handler.PHYSICAL_ID
    return event


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handler.time, "sleep", lambda seconds: None)


@pytest.fixture
def index() -> Iterator[BootstrappableIndex]:
    created = BootstrappableIndex()
    engine = fake_engine()
    engine.index = created
    wiring.use(engine)
    yield created
    wiring.use(None)


def test_create_makes_the_index_and_names_the_resource(index: BootstrappableIndex) -> None:
    # When CloudFormation creates the resource
    answer = handler.on_event(provider_event("Create"), Context(600_000))

    # Then the index exists and the framework gets the resource's id back
    assert index.calls == 1
    assert answer == {"PhysicalResourceId": handler.PHYSICAL_ID, "Data": {"Attempts": "1"}}


def test_a_refusal_while_access_propagates_is_retried_until_it_works(index: BootstrappableIndex) -> None:
    # Given an index that refuses twice (the access policy is still propagating)
    index.failures = 2

    # When the resource is updated
    answer = handler.on_event(provider_event("Update"), Context(600_000))

    # Then the third attempt made it
    assert index.calls == 3
    assert answer["Data"] == {"Attempts": "3"}


def test_a_failure_with_no_time_left_is_raised_for_the_framework_to_report(
    index: BootstrappableIndex,
) -> None:
    # Given an index that keeps refusing and no time left to wait
    index.failures = 99

    # When it is created / Then the error reaches the framework (which answers FAILED with it)
    with pytest.raises(PermissionError, match="data access policy not propagated"):
        handler.on_event(provider_event("Create"), Context(handler.SPARE_MILLIS))


def test_delete_leaves_the_index_to_its_collection(index: BootstrappableIndex) -> None:
    answer = handler.on_event(provider_event("Delete"), Context(600_000))

    assert index.calls == 0
    assert answer == {"PhysicalResourceId": handler.PHYSICAL_ID}


def test_the_lambda_entry_point_is_the_on_event_handler() -> None:
    assert handler.lambda_handler is handler.on_event


def test_an_index_that_cannot_bootstrap_is_reported_not_ignored() -> None:
    # Given the engine's index has no ensure_index (the local in-memory index)
    wiring.use(fake_engine())
    try:
        # When asked to bootstrap / Then it says so instead of pretending
        with pytest.raises(Unavailable, match="ensure_index"):
            wiring.bootstrap_index()
    finally:
        wiring.use(None)
