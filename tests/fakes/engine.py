"""An engine over fakes and the in-memory local adapters, plus a synchronous worker."""

from __future__ import annotations

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.engine import Engine
from memory_engine.models.domain import Memory
from memory_engine.models.messages import ExtractionJob
from memory_engine.settings import Settings
from memory_engine.usecases import extract, jobs
from tests.fakes.ports import EchoExtractor, HashEmbedder, ListQueue, StepClock


def fake_engine(**settings: object) -> Engine:
    return Engine(
        settings=Settings(**settings),  # type: ignore[arg-type]
        store=SqliteStore(":memory:"),
        queue=ListQueue(),
        index=LocalSearchIndex(),
        embedder=HashEmbedder(),
        extractor=EchoExtractor(),
        clock=StepClock(),
    )


def run_worker(engine: Engine) -> list[Memory]:
    """Play the worker: run every queued job to completion, like SQS → worker Lambda would.

    Returns the memories extraction jobs wrote (other kinds of job run too, through the same
    dispatch the worker uses)."""
    assert isinstance(engine.queue, ListQueue)
    written: list[Memory] = []
    while engine.queue.jobs:
        for job in engine.queue.pop_all():
            if isinstance(job, ExtractionJob):
                written.extend(extract.run(engine, job))
            else:
                jobs.run(engine, job)
    return written
