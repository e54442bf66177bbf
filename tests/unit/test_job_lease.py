"""A job in hand keeps its session for as long as it runs: its receipt is renewed while it works
(`usecases.lease`), and the local worker never runs a session's job in a second slot beside the
first, even when the queue hands it out again."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.models.messages import ExtractionJob
from memory_engine.models.queue import ReceivedJob
from memory_engine.usecases import jobs
from memory_engine.usecases.lease import held
from memory_engine_app.worker import STILL_RUNNING, LocalWorker
from tests.contract.builders import ManualClock
from tests.fakes.engine import fake_engine
from tests.fakes.ports import RecordingJobSource

WAIT_S = 30  # a bound on waiting for the other thread's step: only reached when the test fails
JOB = ExtractionJob(tenant="acme", session_uuid="s1")


class Extending(RecordingJobSource):
    """Records every extension, and signals the n-th."""

    def __init__(self, signal_at: int = 1, stale: bool = False) -> None:
        super().__init__()
        self.extended: list[tuple[str, float]] = []
        self.reached = threading.Event()
        self._signal_at = signal_at
        self._stale = stale

    def extend(self, receipt: str, visibility_seconds: float) -> bool:
        self.extended.append((receipt, visibility_seconds))
        if len(self.extended) >= self._signal_at:
            self.reached.set()
        return not self._stale


class Ticks:
    """A `wait` for `held` that returns when the test ticks (never on its own)."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._ticks = threading.Semaphore(0)

    def wait(self, done: threading.Event, seconds: float) -> bool:
        self.asked.append(seconds)
        while not done.is_set():
            if self._ticks.acquire(timeout=0.01):
                return False
        return True

    def tick(self, count: int = 1) -> None:
        for _ in range(count):
            self._ticks.release()


def test_a_held_receipt_is_extended_by_its_whole_visibility_every_third_of_it() -> None:
    # Given a job held for a 30 s visibility
    source = Extending(signal_at=3)
    ticks = Ticks()
    with held(source, "r1", 30.0, wait=ticks.wait) as lease:
        # When a third of it passes three times
        ticks.tick(3)
        assert source.reached.wait(WAIT_S)

    # Then the receipt was extended three times, by 30 s each, after waits of 10 s
    assert source.extended == [("r1", 30.0)] * 3
    assert set(ticks.asked) == {10.0}
    assert lease.renewals == 3


def test_a_lease_whose_receipt_went_stale_stops_renewing() -> None:
    # Given a receipt the queue no longer knows (the job was handed out again)
    source = Extending(stale=True)
    ticks = Ticks()
    with held(source, "r1", 30.0, wait=ticks.wait) as lease:
        # When the first renewal finds it stale, and time goes on
        ticks.tick()
        assert source.reached.wait(WAIT_S)
        ticks.tick(5)

    # Then it stopped trying: one extension asked, the lease marked lost
    assert (len(source.extended), lease.lost) == (1, True)


def test_a_renewal_stuck_in_the_queue_does_not_keep_the_job_from_ending() -> None:
    # Given a queue whose extension never answers until the test lets it
    class Stuck(RecordingJobSource):
        def __init__(self) -> None:
            super().__init__()
            self.entered = threading.Event()
            self.release = threading.Event()
            self.returned = threading.Event()

        def extend(self, receipt: str, visibility_seconds: float) -> bool:
            self.entered.set()
            self.release.wait(WAIT_S)
            self.returned.set()
            return True

    source = Stuck()
    ticks = Ticks()
    try:
        # When the job ends while a renewal is inside the queue's call
        with held(source, "r1", 30.0, wait=ticks.wait, join_seconds=0.0):
            ticks.tick()
            assert source.entered.wait(WAIT_S)

        # Then the lease let go with the renewal still in flight (before, it joined without a bound)
        assert not source.returned.is_set()
    finally:
        source.release.set()


def test_a_job_in_hand_has_its_receipt_renewed_while_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a job that runs until its receipt has been renewed once
    source = Extending()

    def run_until_renewed(*args: object, **kwargs: object) -> None:
        assert source.reached.wait(WAIT_S)

    monkeypatch.setattr(jobs, "run", run_until_renewed)
    message = ReceivedJob(receipt="r1", job=JOB, receive_count=1)

    # When the worker attempts it with a short visibility
    outcome = jobs.attempt(fake_engine(), source, message, jobs.RetryPolicy(), visibility_seconds=0.03)

    # Then it finished, its receipt extended by that visibility while it ran
    assert outcome == "done"
    assert source.extended[0] == ("r1", 0.03)


def test_the_second_slot_never_runs_a_session_whose_job_the_first_slot_runs(tmp_path: Path) -> None:
    # Given a two-slot worker whose job blocks, on a queue whose clock the test moves, and no
    # renewals (as if every one had failed)
    clock = ManualClock()
    queue = SqliteQueue(tmp_path / "queue.sqlite3", clock=clock.time)
    queue.send(JOB)
    started, go, held_back = threading.Event(), threading.Event(), threading.Event()
    runs: list[int] = []

    def attempt(message: ReceivedJob) -> str:
        runs.append(message.receive_count)
        started.set()
        assert go.wait(WAIT_S)
        return "done"

    retry_later = queue.retry_later

    def noting_retry(receipt: str, delay_seconds: float, error: str) -> bool:
        kept = retry_later(receipt, delay_seconds, error)
        if error == STILL_RUNNING:
            held_back.set()
        return kept

    queue.retry_later = noting_retry  # type: ignore[method-assign]
    worker = LocalWorker(queue, attempt, poll_seconds=0.01, visibility_seconds=30, slots=2)
    worker.start()
    try:
        assert started.wait(WAIT_S)

        # When its visibility runs out while it still runs, and the queue hands it out again
        clock.advance(31)
        assert held_back.wait(WAIT_S)
    finally:
        go.set()
        assert worker.stop(WAIT_S)

    # Then only the first delivery ran; the second was hidden again with the reason
    assert runs == [1]
    assert queue.pending_count() == 1
