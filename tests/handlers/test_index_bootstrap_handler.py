"""The deploy-time custom resource: creates the index, retries while access propagates, always answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from functions.index_bootstrap import handler
from memory_engine import wiring
from memory_engine.adapters.local.memory_index import LocalSearchIndex
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


def cfn_event(request_type: str) -> dict[str, Any]:
    return {
        "RequestType": request_type,
        "ResponseURL": "https://cloudformation-custom-resource-response.example.com/signed",
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/MemoryEngine-dev/1",
        "RequestId": "request-1",
        "LogicalResourceId": "SearchIndex",
        "ResourceProperties": {"Index": "memories", "Dimension": "384"},
    }


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What the handler PUTs to CloudFormation's URL (no network)."""
    sent: list[dict[str, Any]] = []

    class Answer:
        def __enter__(self) -> Answer:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def read(self) -> bytes:
            return b""

    def urlopen(request: Any, timeout: float) -> Answer:
        sent.append({"url": request.full_url, "method": request.get_method(), **json.loads(request.data)})
        return Answer()

    monkeypatch.setattr(handler.urllib.request, "urlopen", urlopen)
    monkeypatch.setattr(handler.time, "sleep", lambda seconds: None)
    return sent


@pytest.fixture
def index() -> Iterator[BootstrappableIndex]:
    created = BootstrappableIndex()
    engine = fake_engine()
    engine.index = created
    wiring.use(engine)
    yield created
    wiring.use(None)


def test_create_makes_the_index_and_reports_success(
    index: BootstrappableIndex, answers: list[dict[str, Any]]
) -> None:
    handler.lambda_handler(cfn_event("Create"), Context(600_000))
    assert index.calls == 1
    (answer,) = answers
    assert (answer["method"], answer["Status"]) == ("PUT", "SUCCESS")
    assert answer["url"].endswith("/signed")
    assert (answer["RequestId"], answer["LogicalResourceId"]) == ("request-1", "SearchIndex")


def test_a_refusal_while_access_propagates_is_retried_until_it_works(
    index: BootstrappableIndex, answers: list[dict[str, Any]]
) -> None:
    index.failures = 2
    handler.lambda_handler(cfn_event("Update"), Context(600_000))
    assert index.calls == 3
    assert answers[0]["Status"] == "SUCCESS"


def test_a_failure_with_no_time_left_reports_failed_with_its_reason(
    index: BootstrappableIndex, answers: list[dict[str, Any]]
) -> None:
    index.failures = 99
    handler.lambda_handler(cfn_event("Create"), Context(handler.SPARE_MILLIS))
    (answer,) = answers
    assert answer["Status"] == "FAILED"
    assert "data access policy not propagated" in answer["Reason"]


def test_delete_leaves_the_index_to_its_collection(
    index: BootstrappableIndex, answers: list[dict[str, Any]]
) -> None:
    handler.lambda_handler(cfn_event("Delete"), Context(600_000))
    assert index.calls == 0
    assert answers[0]["Status"] == "SUCCESS"


def test_an_index_that_cannot_bootstrap_is_reported_not_ignored() -> None:
    # Given the engine's index has no ensure_index (the local in-memory index)
    wiring.use(fake_engine())
    try:
        # When asked to bootstrap / Then it says so instead of pretending
        with pytest.raises(Unavailable, match="ensure_index"):
            wiring.bootstrap_index()
    finally:
        wiring.use(None)
