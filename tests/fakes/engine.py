"""Engines over fakes plus each store/queue backend, and a worker that drains their queue.

`ENGINE_BACKENDS` names every way the use cases can be wired for tests: `local` (SQLite store,
a list as queue) and `aws` (DynamoDB store and SQS FIFO queue on moto, the worker Lambda handler
draining the queue). Embedder, index and extractor are the same fakes for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.limits import Limits
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.domain import Memory
from memory_engine.models.messages import ExtractionJob, Job, parse_job
from memory_engine.ports import Queue, Store
from memory_engine.settings import Settings
from memory_engine.usecases import consolidate, extract, jobs
from tests.fakes.ports import EchoExtractor, HashEmbedder, ListQueue, StepClock


def fake_engine(**settings: object) -> Engine:
    return _engine(SqliteStore(":memory:"), ListQueue(), settings)


def _engine(store: Store, queue: Queue, settings: dict[str, object]) -> Engine:
    return Engine(
        limits=Limits.of(Settings(**settings)),  # type: ignore[arg-type]
        store=store,
        queue=queue,
        index=LocalSearchIndex(),
        embedder=HashEmbedder(),
        extractor=EchoExtractor(),
        clock=StepClock(),
    )


@contextmanager
def local_engine(**settings: object) -> Iterator[Engine]:
    yield fake_engine(**settings)


@contextmanager
def aws_engine(**settings: object) -> Iterator[Engine]:
    """The same engine with its store on DynamoDB and its queue on SQS FIFO, both on moto."""
    from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
    from memory_engine.adapters.aws.sqs_queue import SqsQueue
    from tests.fakes.aws import REGION, create_queue, create_table, moto_aws

    with moto_aws():
        table, url = create_table(), create_queue()
        yield _engine(DynamoDbStore(table, REGION), SqsQueue(url, REGION), settings)


ENGINE_BACKENDS: dict[str, Callable[..., AbstractContextManager[Engine]]] = {
    "local": local_engine,
    "aws": aws_engine,
}


def extract_one_turn(engine: Engine, tenant: str, text: str = "My cat is called Mochi.") -> None:
    """Turn d1 of session s1 (thread-1) consolidated with force_summary: one extraction job, which
    makes it a memory of its own when the worker runs."""
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": "d1", "query": text, "answer": "Lovely!"},
            "options": {"force_summary": True},
        }
    )
    consolidate.run(engine, tenant, request)


def queued_jobs(engine: Engine) -> int:
    """Extraction jobs waiting (or in flight) in the engine's queue."""
    if isinstance(engine.queue, ListQueue):
        return len(engine.queue.jobs)
    count: int = engine.queue.pending_count()  # type: ignore[attr-defined]
    return count


def peek_jobs(engine: Engine) -> list[Job]:
    """The jobs waiting in the engine's queue, oldest first, left there.

    On SQS they are received in batches (a FIFO receive hands several of one group, in order),
    then made visible again: each counts one receive towards the dead-letter queue."""
    if isinstance(engine.queue, ListQueue):
        return list(engine.queue.jobs)
    sqs, url = engine.queue.client, engine.queue.queue_url  # type: ignore[attr-defined]
    seen: list[dict[str, Any]] = []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=30).get(
        "Messages", []
    ):
        seen.extend(messages)
    for message in seen:
        sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
    return [parse_job(message["Body"]) for message in seen]


def run_worker(engine: Engine, deliveries: int = 1) -> list[Memory]:
    """Play the worker until the queue is empty; returns the memories written, oldest batch first.

    Jobs of every kind run, through the same dispatch the worker uses; only extraction writes
    the memories returned.

    `deliveries` > 1 hands every job to the worker that many times, as an at-least-once queue may.
    On the list queue the use case runs directly; on SQS the worker Lambda's handler gets the
    batches, as the event source mapping would deliver them.
    """
    if isinstance(engine.queue, ListQueue):
        written: list[Memory] = []
        while engine.queue.jobs:
            for job in engine.queue.pop_all():
                for _ in range(deliveries):
                    if isinstance(job, ExtractionJob):
                        written.extend(extract.run(engine, job))
                    else:
                        jobs.run(engine, job)
        return written
    return _run_lambda_worker(engine, deliveries)


def _run_lambda_worker(engine: Engine, deliveries: int) -> list[Memory]:
    from functions.extraction_worker.handler import lambda_handler
    from tests.fakes.sqs_lambda import EventSourceMapping

    before = {memory.memory_id for memory in engine.store.iter_memories()}
    previous: Any = wiring._override  # restore whatever engine the calling test installed
    wiring.use(engine)
    try:
        EventSourceMapping(engine.queue.queue_url, lambda_handler).drain(deliveries)  # type: ignore[attr-defined]
    finally:
        wiring.use(previous)
    fresh = [memory for memory in engine.store.iter_memories() if memory.memory_id not in before]
    return sorted(fresh, key=lambda memory: (memory.session_uuid, memory.first_seq))
