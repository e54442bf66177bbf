"""The local stand-in for the SQS-triggered worker: a thread that drains the SQLite queue.

It runs jobs of every kind through one `process` callable (`memory_engine.usecases.jobs.run`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from memory_engine.logsafe import error_details
from memory_engine.models.messages import Job
from memory_engine.ports import JobSource

log = logging.getLogger("memory_engine.worker")


def failure_reason(error: BaseException) -> str:
    """What the inspector shows for a failed job: the error's kind and its words."""
    return f"{type(error).__name__}: {error}".strip()


class LocalWorker:
    """Receives one job at a time and runs `process(job, redelivered)` on it; a failure makes the
    job visible again (the queue parks it as dead after its max receives), so an accepted turn is
    never dropped. `redelivered` is True from the second delivery on (SQS: ApproximateReceiveCount)."""

    def __init__(
        self,
        queue: JobSource,
        process: Callable[[Job, bool], object],
        poll_seconds: float = 0.05,
        visibility_seconds: float = 30.0,
    ) -> None:
        self._queue = queue
        self._process = process
        self._poll_seconds = poll_seconds
        self._visibility_seconds = visibility_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="memory-engine-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the job in hand, then stop; unreceived jobs stay queued on disk for next time."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def drain(self) -> int:
        """Process every job that is ready now (tests and benchmarks); returns how many ran."""
        done = 0
        while self.run_once():
            done += 1
        return done

    def run_once(self) -> bool:
        received = self._queue.receive(1, self._visibility_seconds)
        if not received:
            return False
        message = received[0]
        try:
            self._process(message.job, message.receive_count > 1)
        except Exception as error:
            log.warning(
                "job failed; it will be retried",
                extra={"receive": message.receive_count, **error_details(error)},
            )
            self._queue.release(message.receipt, failure_reason(error))
        else:
            self._queue.ack(message.receipt)
        return True

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                busy = self.run_once()
            except Exception as error:  # the queue itself failed: back off, never die
                log.warning("worker loop error", extra=error_details(error))
                busy = False
            if not busy:
                self._stop.wait(self._poll_seconds)
