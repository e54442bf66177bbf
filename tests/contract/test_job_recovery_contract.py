"""A session whose extraction job died gets memories once the LLM is back: the next batch of turns
queues a job again, and so does a restart (local: the worker's start-up sweep; AWS: the scheduled
sweep). Local (SQLite store and queue, the in-process worker) and AWS (DynamoDB and SQS FIFO on
moto, the worker Lambda's handler; again with the store on dynalite) pass these same
assertions."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.openai.errors import LlmUnavailable
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.limits import Limits
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.domain import Turn
from memory_engine.ports import Extraction, ExtractionContext, Queue, Store
from memory_engine.settings import Settings
from memory_engine.usecases import consolidate
from memory_engine_app import local_engine
from tests.fakes.ports import EchoExtractor, HashEmbedder, StepClock

TENANT = "tenant-a"
SESSION = "session-1"
SETTINGS = {"worker_max_receives": 3, "worker_retry_base_seconds": 0}


class FlakyLlm(EchoExtractor):
    """The built-in echo, or an LLM outage while `down`."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.calls = 0

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        self.calls += 1
        if self.down:
            raise LlmUnavailable("The LLM endpoint failed 4 times in a row; the batch will be retried later.")
        return super().extract(turns, context)


@dataclass
class Deployment:
    """One backend: an engine, a way to run its worker until the queue is idle, and a restart."""

    llm: FlakyLlm
    engine: Callable[[], Engine]
    work: Callable[[], None]
    restart: Callable[[], None]


def _engine(store: Store, queue: Queue, llm: FlakyLlm) -> Engine:
    return Engine(
        limits=Limits.of(Settings(**SETTINGS)),  # type: ignore[arg-type]
        store=store,
        queue=queue,
        index=LocalSearchIndex(),
        embedder=HashEmbedder(),
        extractor=llm,
        clock=StepClock(),
    )


@contextmanager
def _local(tmp_path: Path) -> Iterator[Deployment]:
    from memory_engine.adapters.local.sqlite_queue import SqliteQueue
    from memory_engine.adapters.local.sqlite_store import SqliteStore

    path = tmp_path / "memory-engine.sqlite3"
    llm = FlakyLlm()
    current = [_engine(SqliteStore(path), SqliteQueue(path, max_receives=3), llm)]
    worker = [local_engine.local_worker(current[0])]

    def restart() -> None:
        # A new process on the same file: a fresh engine and worker, which sweeps when it starts.
        current[0] = _engine(SqliteStore(path), SqliteQueue(path, max_receives=3), llm)
        worker[0] = local_engine.local_worker(current[0])
        worker[0].sweep_if_due()

    yield Deployment(llm, lambda: current[0], lambda: _ignore(worker[0].drain()), restart)


def _ignore(_: object) -> None:
    return None


@contextmanager
def _aws(tmp_path: Path, dynalite: bool = False) -> Iterator[Deployment]:
    """DynamoDB and SQS FIFO on moto, or the store on dynalite (the queue stays on moto)."""
    from functions.extraction_worker.handler import lambda_handler
    from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
    from memory_engine.adapters.aws.sqs_queue import SqsQueue
    from memory_engine_app.server.apigw import LocalContext
    from tests.contract import dynalite as dynalite_server
    from tests.fakes.aws import REGION, create_queue, create_table, moto_aws
    from tests.fakes.sqs_lambda import EventSourceMapping

    server = dynalite_server.server() if dynalite else None
    with moto_aws():
        url = create_queue(max_receives=5)
        if server is None:
            store = DynamoDbStore(create_table(), REGION)
        else:  # moto answers only AWS's own endpoints: dynalite's requests go through to it
            store = DynamoDbStore(server.engine_table(), dynamodb=server.client())
        llm = FlakyLlm()
        engine = _engine(store, SqsQueue(url, REGION), llm)
        wiring.use(engine)
        try:
            mapping = EventSourceMapping(url, lambda_handler, batch_size=1)
            yield Deployment(
                llm,
                lambda: engine,
                lambda: _ignore(mapping.drain()),
                # Functions keep no state between invocations: the scheduled sweep is the restart.
                lambda: _ignore(lambda_handler({"sweep": True}, LocalContext())),
            )
        finally:
            wiring.use(None)


@contextmanager
def _aws_dynalite(tmp_path: Path) -> Iterator[Deployment]:
    with _aws(tmp_path, dynalite=True) as deployment:
        yield deployment


DEPLOYMENTS = {"local": _local, "aws": _aws, "aws-dynalite": _aws_dynalite}


@pytest.fixture(params=sorted(DEPLOYMENTS))
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    with DEPLOYMENTS[request.param](tmp_path) as built:
        yield built


def turns(deployment: Deployment, first: int, count: int) -> None:
    for n in range(first, first + count):
        request = ConsolidateRequest.model_validate(
            {
                "session_uuid": SESSION,
                "parent_session_uuid": "thread-1",
                "new_dialog": {"uuid": f"d{n}", "query": f"turn {n}", "answer": "ok"},
            }
        )
        consolidate.run(deployment.engine(), TENANT, request)


def dead_errors(engine: Engine) -> list[str]:
    return [dead.error for dead in engine.queue.dead_letters()]  # type: ignore[attr-defined]


def memories(engine: Engine) -> int:
    return len(engine.store.list_memories(TENANT, SESSION))


def test_a_job_that_fails_every_attempt_dies_with_its_error_after_three(deployment: Deployment) -> None:
    deployment.llm.down = True

    turns(deployment, 1, 20)
    deployment.work()

    assert deployment.llm.calls == 3
    [error] = dead_errors(deployment.engine())
    assert error.startswith("LlmUnavailable: The LLM endpoint failed")
    assert memories(deployment.engine()) == 0


def test_after_a_dead_job_the_next_turns_queue_one_again_and_memories_appear_when_the_llm_is_back(
    deployment: Deployment,
) -> None:
    # Given a job that died while the LLM was down
    deployment.llm.down = True
    turns(deployment, 1, 20)
    deployment.work()
    # When 30 more turns come in, and the LLM is back before the worker runs again
    turns(deployment, 21, 30)
    deployment.llm.down = False
    deployment.work()
    # Then every complete batch of the 50 buffered turns became a memory
    assert memories(deployment.engine()) == 6
    assert len(deployment.engine().store.buffered_turns(TENANT, SESSION)) == 2


def test_after_a_dead_job_a_restart_queues_it_again(deployment: Deployment) -> None:
    # Given a job that died while the LLM was down, and no turn since
    deployment.llm.down = True
    turns(deployment, 1, 20)
    deployment.work()
    deployment.llm.down = False
    # When the engine restarts (AWS: the scheduled sweep runs)
    deployment.restart()
    deployment.work()
    # Then the session got its memories
    assert memories(deployment.engine()) == 2
