"""The second delete from Serverless through SQS FIFO (moto) and the worker Lambda's handler: the
purge job waits hidden on the queue until the index has settled, then deletes again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from functions.extraction_worker.handler import lambda_handler
from memory_engine.adapters.aws import clients
from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.models.api import DeleteRequest
from memory_engine.usecases import delete
from tests.fakes.aws import REGION
from tests.fakes.engine import extract_one_turn
from tests.fakes.opensearch import StubCluster
from tests.fakes.ports import SetClock
from tests.fakes.sqs_lambda import EventSourceMapping

TENANT = "acme"


@pytest.fixture
def cluster(engine: Engine) -> Iterator[StubCluster]:
    """The engine's index on Serverless (a stub transport whose searches find one copy), its clock
    standing still, installed for the worker's handler."""
    stub = StubCluster(stored=[{"_id": "copy-1", "doc_id": "m"}])
    engine.index = OpenSearchIndex(
        "https://stub", dimension=engine.embedder.dimension, service="aoss", client=stub.client()
    )
    engine.clock = SetClock()
    wiring.use(engine)
    yield stub
    wiring.use(None)


class Worker:
    """The worker's handler behind an event source mapping that leaves failed records hidden (as
    Lambda does), keeping each event it delivered."""

    def __init__(self, engine: Engine) -> None:
        self.events: list[dict[str, Any]] = []
        url = engine.queue.queue_url  # type: ignore[attr-defined]
        self.mapping = EventSourceMapping(url, self._handle, failed_visible_at_once=False)

    def _handle(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.events.append(event)
        return lambda_handler(event, context)

    def poll(self) -> bool:
        return self.mapping.poll()


def extracted_then_deleted(engine: Engine, worker: Worker) -> None:
    extract_one_turn(engine, TENANT)
    assert worker.poll()  # the extraction job
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid="d1"))


def test_a_purge_waits_hidden_on_the_queue_until_due_then_deletes_again(
    engine: Engine, cluster: StubCluster
) -> None:
    # Given a memory deleted right after it was extracted, on Serverless
    worker = Worker(engine)
    extracted_then_deleted(engine, worker)
    sent = len(cluster.requests)
    # When the worker receives the purge job before its time
    assert worker.poll()
    [record] = worker.events[-1]["Records"]
    # Then it is reported failed, hidden (nothing to receive now), in a group of its own, and the
    # index saw nothing
    assert worker.mapping.responses[-1]["batchItemFailures"] == [{"itemIdentifier": record["messageId"]}]
    assert record["attributes"]["MessageGroupId"].startswith(f"{TENANT}#purge:")
    assert worker.poll() is False
    assert cluster.requests[sent:] == []
    # When its time has come (moto keeps real time: the hidden message is shown by hand)
    engine.clock.advance(60)
    sqs = clients.client("sqs", REGION)
    sqs.change_message_visibility(
        QueueUrl=worker.mapping.queue_url, ReceiptHandle=record["receiptHandle"], VisibilityTimeout=0
    )
    assert worker.poll()
    # Then the worker deletes the memory's copies again, and the queue is empty
    assert worker.mapping.responses[-1]["batchItemFailures"] == []
    assert [request.path.rsplit("/", 1)[-1] for request in cluster.requests[sent:]] == ["_search", "_bulk"]
    assert worker.poll() is False
