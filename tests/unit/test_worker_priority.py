"""The local worker runs below the server's requests: extraction is background work, and on a
small machine its embedding otherwise takes the cores a retrieve is waiting for."""

from __future__ import annotations

import os
import sys
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from memory_engine.models.messages import ExtractionJob
from memory_engine_app import local_engine
from memory_engine_app.worker import LocalWorker, lower_priority
from tests.fakes.engine import fake_engine

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="per-thread nice values are Linux's")


class OneJob:
    """A job source that hands out one job, then nothing."""

    def __init__(self) -> None:
        self.jobs = [SimpleNamespace(receipt="r-1", job=ExtractionJob(tenant="acme", session_uuid="s1"))]
        self.acked: list[str] = []

    def receive(self, count: int, visibility_seconds: float) -> list[Any]:
        handed, self.jobs = self.jobs, []
        return handed

    def ack(self, receipt: str) -> None:
        self.acked.append(receipt)

    def release(self, receipt: str) -> None:  # pragma: no cover - only when attempt raises
        raise AssertionError("the job should have been acked")


def own_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def needs_room(steps: int) -> None:
    """Skip when this process already runs within `steps` of the lowest priority (19): a test run
    under `nice -n 19` cannot show a thread going lower, and the kernel clamps it without an error."""
    if own_nice() + steps > 19:
        pytest.skip(f"the tests run at nice {own_nice()}: no room to go {steps} steps lower")


@linux_only
def test_lowering_the_priority_changes_only_the_calling_thread() -> None:
    # Given a thread that lowers its own priority by 3
    needs_room(3)
    seen: dict[str, int] = {}

    def lower() -> None:
        before = own_nice()
        lower_priority(3)
        seen["raised_by"] = own_nice() - before

    # When it runs beside this thread
    before_here = own_nice()
    thread = threading.Thread(target=lower)
    thread.start()
    thread.join()

    # Then it runs 3 nice steps lower, and this thread is as it was
    assert seen["raised_by"] == 3
    assert own_nice() == before_here


@linux_only
def test_the_worker_thread_runs_its_jobs_at_the_configured_lower_priority() -> None:
    # Given a worker that lowers itself by 4 steps, and one job waiting
    needs_room(4)
    source = OneJob()
    ran_at: list[int] = []
    ran = threading.Event()

    def attempt(message: Any) -> str:
        ran_at.append(own_nice())
        ran.set()
        return "done"

    worker = LocalWorker(source, attempt, poll_seconds=0.01, nice=4)  # type: ignore[arg-type]

    # When its thread runs the job
    worker.start()
    assert ran.wait(5)
    worker.stop()

    # Then the job ran 4 steps below this (the server's) thread, and was acked
    assert ran_at == [own_nice() + 4]
    assert source.acked == ["r-1"]


def test_draining_in_the_callers_thread_leaves_its_priority_alone() -> None:
    # Given a worker configured to run lower, drained by the caller (tests, benchmarks)
    before = os.getpriority(os.PRIO_PROCESS, 0) if sys.platform == "linux" else 0
    worker = LocalWorker(OneJob(), lambda message: "done", nice=5)  # type: ignore[arg-type]

    # When drained
    assert worker.drain() == 1

    # Then the calling thread's priority is unchanged
    assert (os.getpriority(os.PRIO_PROCESS, 0) if sys.platform == "linux" else 0) == before


def test_the_worker_gets_its_own_copy_of_an_in_process_embedder() -> None:
    # Given an engine whose embedder can be cloned
    clones: list[object] = []

    class Cloneable:
        dimension = 8

        def clone(self) -> Cloneable:
            copy = Cloneable()
            clones.append(copy)
            return copy

    engine = fake_engine()
    engine.embedder = Cloneable()  # type: ignore[assignment]

    # When the worker's engine is made
    working = local_engine.worker_engine(engine)

    # Then it embeds with the clone and shares everything else
    assert clones and working.embedder is clones[0]
    assert (working.store, working.queue, working.index, working.turn_vectors) == (
        engine.store,
        engine.queue,
        engine.index,
        engine.turn_vectors,
    )


def test_an_embedder_without_a_copy_is_shared_with_the_worker() -> None:
    # Given an engine over a fake (or remote) embedder, which has no clone
    engine = fake_engine()

    # When the worker's engine is made, Then it is the engine itself
    assert local_engine.worker_engine(engine) is engine


@linux_only
def test_the_worker_warms_its_model_in_its_own_thread_at_its_priority_before_any_job() -> None:
    # Given a worker with a warm-up step and no job waiting
    needs_room(2)
    warmed_at: list[int] = []
    warmed = threading.Event()

    def warm() -> None:
        warmed_at.append(own_nice())
        warmed.set()

    source = OneJob()
    source.jobs = []
    worker = LocalWorker(source, lambda message: "done", poll_seconds=0.01, nice=2, warm=warm)  # type: ignore[arg-type]

    # When its thread starts
    worker.start()
    assert warmed.wait(5)
    worker.stop()

    # Then the warm-up ran once, 2 steps below this thread
    assert warmed_at == [own_nice() + 2]


def test_a_warm_up_that_fails_leaves_the_worker_running_its_jobs() -> None:
    # Given a worker whose warm-up raises, and one job waiting
    ran = threading.Event()

    def broken() -> None:
        raise RuntimeError("no model here")

    def attempt(message: Any) -> str:
        ran.set()
        return "done"

    worker = LocalWorker(OneJob(), attempt, poll_seconds=0.01, warm=broken)  # type: ignore[arg-type]

    # When its thread starts, Then the job still runs
    worker.start()
    assert ran.wait(5)
    worker.stop()
