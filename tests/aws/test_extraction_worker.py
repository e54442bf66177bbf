"""The extraction worker Lambda on an SQS FIFO queue (moto), fed as the event source mapping would.

One memory per batch of 8 turns; 20 consolidated turns queue one job that writes 2 memories.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest

from functions.extraction_worker.handler import lambda_handler
from memory_engine.adapters.aws import clients
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.domain import Turn, TurnStatus
from memory_engine.ports import Extraction, ExtractionContext
from memory_engine.usecases import consolidate
from memory_engine_app.server.apigw import LocalContext
from tests.fakes.aws import REGION
from tests.fakes.engine import aws_engine
from tests.fakes.ports import EchoExtractor, FailingExtractor
from tests.fakes.sqs_lambda import EventSourceMapping

TENANT = "acme"


def fill(engine: Engine, session: str, turns: int = 20) -> None:
    for n in range(1, turns + 1):
        request = ConsolidateRequest.model_validate(
            {
                "session_uuid": session,
                "parent_session_uuid": f"thread-of-{session}",
                "new_dialog": {"uuid": f"{session}-d{n}", "query": f"turn {n} of {session}", "answer": "ok"},
            }
        )
        consolidate.run(engine, TENANT, request)


def memories_of(engine: Engine, session: str) -> list[list[str]]:
    return [memory.source_dialog_uuids for memory in engine.store.list_memories(TENANT, session)]


@pytest.fixture
def worker(engine: Engine) -> Iterator[EventSourceMapping]:
    wiring.use(engine)
    yield EventSourceMapping(engine.queue.queue_url, lambda_handler)  # type: ignore[attr-defined]
    wiring.use(None)


def failed_ids(response: dict[str, Any]) -> list[str]:
    return [item["itemIdentifier"] for item in response["batchItemFailures"]]


def test_in_a_batch_only_the_failing_record_is_reported(engine: Engine, worker: EventSourceMapping) -> None:
    # Given three sessions with a job each, and an extractor that fails for s2 only
    for session in ["s1", "s2", "s3"]:
        fill(engine, session)
    engine.extractor = FailingExtractor({"s2"})

    # When the worker gets the three jobs in one batch
    assert worker.poll()

    # Then only s2's record is reported failed, and the others wrote their memories
    response = worker.responses[-1]
    assert len(failed_ids(response)) == 1
    assert [len(memories_of(engine, s)) for s in ["s1", "s2", "s3"]] == [2, 0, 2]
    assert engine.queue.pending_count() == 1  # type: ignore[attr-defined]


def test_after_a_failure_the_later_jobs_of_that_session_wait_while_other_sessions_go_on(
    engine: Engine, worker: EventSourceMapping
) -> None:
    # Given s1 with two jobs (threshold crossing, then a forced summary) and s2 with one
    fill(engine, "s1")
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-of-s1",
            "new_dialog": {"uuid": "s1-d21", "query": "one more", "answer": "ok"},
            "options": {"force_summary": True},
        }
    )
    consolidate.run(engine, TENANT, request)
    fill(engine, "s2")
    engine.extractor = FailingExtractor({"s1"})

    # When one batch carries all three and s1's first job fails
    assert worker.poll()

    # Then both s1 records are reported (FIFO order kept), s2 is done
    assert len(failed_ids(worker.responses[-1])) == 2
    assert memories_of(engine, "s1") == []
    assert len(memories_of(engine, "s2")) == 2


def test_the_same_message_delivered_twice_writes_one_memory_per_batch(
    engine: Engine, worker: EventSourceMapping
) -> None:
    fill(engine, "s1")

    worker.poll(deliveries=2)

    assert memories_of(engine, "s1") == [
        [f"s1-d{n}" for n in range(1, 9)],
        [f"s1-d{n}" for n in range(9, 17)],
    ]
    assert all(response["batchItemFailures"] == [] for response in worker.responses)


def test_a_crash_after_extraction_before_the_write_is_retried_without_loss(
    engine: Engine, worker: EventSourceMapping
) -> None:
    # Given a full buffer, and a worker that dies on its first attempt to save a memory
    fill(engine, "s1")
    crashes = []

    def crash_once(**_: Any) -> None:
        if not crashes:
            crashes.append(1)
            raise RuntimeError("the function timed out right after extracting")

    events = clients.client("dynamodb", REGION).meta.events
    events.register("before-call.dynamodb.TransactWriteItems", crash_once, unique_id="crash-once")

    # When the job is delivered, fails, and is delivered again
    worker.drain()

    # Then it was retried, two memories were written once each, and every turn is accounted for
    assert crashes == [1]
    assert [failed_ids(r) != [] for r in worker.responses] == [True, False]
    assert len(memories_of(engine, "s1")) == 2
    turns = engine.store.list_turns(TENANT, "s1")
    assert [t.status for t in turns].count(TurnStatus.EXTRACTED) == 16
    assert [t.dialog_uuid for t in turns if t.status is TurnStatus.BUFFERED] == [
        f"s1-d{n}" for n in range(17, 21)
    ]


def test_a_poison_message_goes_to_the_dead_letter_queue_after_the_configured_receives(
    engine: Engine, worker: EventSourceMapping
) -> None:
    # Given a message no worker can read, next to a good job (the queue moves it after 5 receives)
    sqs = clients.client("sqs", REGION)
    url = engine.queue.queue_url  # type: ignore[attr-defined]
    sqs.send_message(
        QueueUrl=url, MessageBody="{not json", MessageGroupId="poison", MessageDeduplicationId="p1"
    )
    fill(engine, "s1")

    # When the worker keeps polling
    worker.drain(max_polls=20)

    # Then the good job is done, and the poison message was tried 5 times, then parked, not dropped
    assert len(memories_of(engine, "s1")) == 2
    assert sum("batchItemFailures" in r and len(r["batchItemFailures"]) for r in worker.responses) == 5
    redrive = json.loads(
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"][
            "RedrivePolicy"
        ]
    )
    dead_url = sqs.get_queue_url(QueueName=redrive["deadLetterTargetArn"].rsplit(":", 1)[-1])["QueueUrl"]
    dead = sqs.receive_message(QueueUrl=dead_url, MaxNumberOfMessages=10)["Messages"]
    assert [message["Body"] for message in dead] == ["{not json"]
    assert engine.queue.pending_count() == 0  # type: ignore[attr-defined]


def test_a_failed_job_stays_hidden_for_its_backoff_then_dies_with_its_error_in_the_dead_letter_queue(
    engine: Engine,
) -> None:
    # Given a job whose extraction always fails, a first backoff of 2-4 s and 2 attempts
    engine.limits = replace(engine.limits, worker_retry_base_seconds=4.0, worker_max_receives=2)
    fill(engine, "s1")
    engine.extractor = FailingExtractor({"s1"})
    wiring.use(engine)
    worker = EventSourceMapping(
        engine.queue.queue_url,  # type: ignore[attr-defined]
        lambda_handler,
        failed_visible_at_once=False,
    )
    try:
        # When the worker fails it once
        worker.poll()
        # Then it is not delivered again before its delay (2-4 s) has passed
        assert worker.poll() is False
        time.sleep(4.2)
        # And its second failure is its last: it goes to the dead-letter queue with its error
        assert worker.poll() is True
    finally:
        wiring.use(None)
    assert worker.responses[-1] == {"batchItemFailures": []}
    [dead] = engine.queue.dead_letters()  # type: ignore[attr-defined]
    assert (dead.job.session_uuid, dead.receive_count) == ("s1", 2)
    assert dead.error.startswith("RuntimeError (see the worker log) Parked as dead")
    assert "`memory-engine jobs retry <id>`" in dead.error
    assert engine.queue.pending_count() == 0  # type: ignore[attr-defined]


class WaitingExtractor(EchoExtractor):
    """Echoes once `go` is set: a job that runs until the test has seen what it waits for."""

    def __init__(self, go: threading.Event) -> None:
        super().__init__()
        self.go = go

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        assert self.go.wait(30)
        return super().extract(turns, context)


def test_the_worker_extends_the_visibility_of_the_job_it_runs(
    engine: Engine, worker: EventSourceMapping
) -> None:
    # Given a job whose extraction lasts until its message's visibility has been extended
    engine.limits = replace(engine.limits, job_visibility_seconds=0.03)
    fill(engine, "s1")
    extended = threading.Event()
    queue: Any = engine.queue
    extend = queue.extend
    receipts: list[str] = []

    def noting_extend(receipt: str, visibility_seconds: float) -> bool:
        receipts.append(receipt)
        kept: bool = extend(receipt, visibility_seconds)
        extended.set()
        return kept

    queue.extend = noting_extend
    engine.extractor = WaitingExtractor(extended)

    # When the worker runs it
    assert worker.poll()

    # Then the job's own message was extended on SQS while it ran, and the job was done
    assert receipts and all(receipt == receipts[0] for receipt in receipts)
    assert worker.responses[-1] == {"batchItemFailures": []}
    assert memories_of(engine, "s1")[0] == [f"s1-d{n}" for n in range(1, 9)]


def test_the_scheduled_sweep_queues_a_job_for_a_full_buffer_without_one(engine: Engine) -> None:
    # Given a full buffer whose job was lost
    fill(engine, "s1")
    engine.queue.ack(engine.queue.receive(1)[0].receipt)  # type: ignore[attr-defined]
    wiring.use(engine)
    try:
        # When the scheduled rule invokes the worker with the sweep event
        answer = lambda_handler({"sweep": True}, LocalContext())
    finally:
        wiring.use(None)
    # Then the session has a job again
    assert answer == {"queued": 1}


def force(engine: Engine, session: str) -> None:
    """One more turn with force_summary: the one job for everything buffered."""
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": f"thread-of-{session}",
            "new_dialog": {"uuid": f"{session}-last", "query": "that is all", "answer": "ok"},
            "options": {"force_summary": True},
        }
    )
    consolidate.run(engine, TENANT, request)


@pytest.mark.parametrize("remaining", [5.0, 600.0])
def test_the_worker_lambda_runs_a_job_under_its_invocations_time(remaining: float) -> None:
    # Given one job for 40 buffered turns (5 batches), and invocations with `remaining` s each
    with aws_engine(extraction_threshold=1000) as engine:
        fill(engine, "s1", 39)
        force(engine, "s1")
        wiring.use(engine)
        try:
            mapping = EventSourceMapping(
                engine.queue.queue_url,  # type: ignore[attr-defined]
                lambda_handler,
                batch_size=1,
                context=lambda: LocalContext(remaining + 1),  # the deadline keeps a second
            )
            # When the queue is drained, one job per invocation
            invocations = mapping.drain()
        finally:
            wiring.use(None)

        # Then every batch was extracted without a failure: in one invocation with time to spare,
        # one batch per invocation with 5 s
        assert len(memories_of(engine, "s1")) == 5
        assert all(not response["batchItemFailures"] for response in mapping.responses)
        assert invocations == (1 if remaining > 100 else 5)
