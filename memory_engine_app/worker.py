"""The local stand-in for the SQS-triggered worker: a thread that drains the SQLite queue, and
sweeps for stuck buffers at start-up and then every `sweep_seconds`.

Each received job goes to one `attempt` callable (`memory_engine.usecases.jobs.attempt`), which
runs it and settles a failure (a retry after a backoff, or a dead letter); the sweep is
`memory_engine.usecases.sweep.run`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from memory_engine import deadline
from memory_engine.deadline import Deadline
from memory_engine.edge.logsafe import error_details
from memory_engine.errors import Cancelled
from memory_engine.models.queue import ReceivedJob
from memory_engine.ports import JobSource, SingleConsumerQueue

log = logging.getLogger("memory_engine.worker")

# What a released job records, should it be parked later without another word of its own.
STOPPED = "The worker stopped while the job ran; it was released for the next start."
UNSETTLED = "The job's run ended but could not be settled with the queue (see the worker log)"
STILL_RUNNING = (
    "Delivered again while the session's previous delivery still ran in another worker slot (its "
    "visibility could not be extended in time); held back until that run ends."
)


class LocalWorker:
    """Receives one job at a time and hands it to `attempt`, which says "done" (acked here),
    "retry" or "dead" (already settled with the queue). A job that raises out of `attempt` (the
    queue failed while settling it) is released, so an accepted turn is never dropped.

    `slots` threads take jobs side by side (the queue hands out at most one job per session, so
    a session's jobs still run in order); the first one also sweeps. A job's receipt is renewed
    while it runs (`usecases.lease`), and should it come back all the same, a slot never takes a
    session whose job another slot is running."""

    def __init__(
        self,
        queue: JobSource,
        attempt: Callable[[ReceivedJob], str],
        poll_seconds: float = 0.05,
        visibility_seconds: float = 30.0,
        sweep: Callable[[], object] | None = None,
        sweep_seconds: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        nice: int = 0,
        warm: Callable[[], object] | None = None,
        slots: int = 1,
    ) -> None:
        self._queue = queue
        self._attempt = attempt
        self._poll_seconds = poll_seconds
        self._visibility_seconds = visibility_seconds
        self._sweep = sweep
        self._sweep_seconds = sweep_seconds
        self._clock = clock
        self._nice = nice
        self._warm = warm
        self._next_sweep = 0.0  # at once: a restart finds the buffers a dead job left behind
        self._slots = max(1, slots)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        # The sessions (message groups) whose job a slot is running now.
        self._in_hand: set[str] = set()
        self._in_hand_lock = threading.Lock()

    def start(self) -> None:
        """Release what a dead predecessor held (this worker is the queue's one consumer), then
        work in threads of its own."""
        if isinstance(self._queue, SingleConsumerQueue):
            self._queue.release_in_flight()
        self._threads = [
            threading.Thread(
                target=self._run, args=(slot == 0,), name=f"memory-engine-worker-{slot}", daemon=True
            )
            for slot in range(self._slots)
        ]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop the jobs in hand at their next check (`memory_engine.deadline`: within one
        embedding chunk or batch) and release them, then stop; queued jobs stay on disk for next
        time. False if a thread was still running after `timeout` seconds."""
        self._stop.set()
        ends = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, ends - time.monotonic()))
        stopped = not any(thread.is_alive() for thread in self._threads)
        if not stopped and isinstance(self._queue, SingleConsumerQueue):
            # A job that did not reach its next check in time (a loaded host): the process ends
            # now, so hand its job back rather than leave it hidden until its visibility runs out.
            # A late ack of the old receipt is refused as stale; the next start runs it again.
            self._queue.release_in_flight()
        return stopped

    def drain(self) -> int:
        """Process every job that is ready now (tests and benchmarks); returns how many ran."""
        done = 0
        while self.run_once():
            done += 1
        return done

    def sweep_if_due(self) -> None:
        """Run the sweep when its time has come (start-up, then every `sweep_seconds`)."""
        if self._sweep is None or self._clock() < self._next_sweep:
            return
        self._next_sweep = self._clock() + self._sweep_seconds
        try:
            self._sweep()
        except Exception as error:  # the store or queue is down: the next sweep tries again
            log.warning("sweep failed", extra=error_details(error))

    def run_once(self) -> bool:
        received = self._queue.receive(1, self._visibility_seconds)
        if not received:
            return False
        message = received[0]
        group = message.job.group_id()
        with self._in_hand_lock:
            running = group in self._in_hand
            if not running:
                self._in_hand.add(group)
        if running:
            # Its lease lapsed (renewals failed for a whole visibility timeout) while another slot
            # still runs the session's job: never a second run beside it. Hidden again, with why.
            log.warning("a job came back while its session's job still runs here; hidden again")
            self._queue.retry_later(message.receipt, self._visibility_seconds, STILL_RUNNING)
            return True
        try:
            return self._run_held(message)
        finally:
            with self._in_hand_lock:
                self._in_hand.discard(group)

    def _run_held(self, message: ReceivedJob) -> bool:
        try:
            with deadline.within(Deadline(cancelled=self._stop.is_set)):
                outcome = self._attempt(message)
        except Cancelled:
            log.info("worker stopping: the job in hand is released for next time")
            self._queue.release(message.receipt, STOPPED)
        except Exception as error:
            log.warning("could not settle a failed job; released", extra=error_details(error))
            self._queue.release(message.receipt, f"{UNSETTLED} ({type(error).__name__})")
        else:
            if outcome == "done":
                self._queue.ack(message.receipt)
        return True

    def _run(self, sweeps: bool = True) -> None:
        lower_priority(self._nice)
        if self._warm is not None and sweeps:
            # Loaded here, not on the first job: that job's memories are not late by a model load,
            # and the threads the model starts are this thread's, at its priority.
            try:
                self._warm()
            except Exception as error:  # the first job will load it (and report what is wrong)
                log.warning("could not warm the worker's model", extra=error_details(error))
        while not self._stop.is_set():
            try:
                if sweeps:
                    self.sweep_if_due()
                busy = self.run_once()
            except Exception as error:  # the queue itself failed: back off, never die
                log.warning("worker loop error", extra=error_details(error))
                busy = False
            if not busy:
                self._stop.wait(self._poll_seconds)


def lower_priority(nice: int) -> None:
    """Raise the calling thread's nice value by `nice` (Linux: niceness is per thread, and threads
    the caller starts later, such as an embedding runtime's pool, inherit it).

    Extraction is background work: on a small machine its embedding competes with the server's
    requests for the cores, and a retrieve waiting behind it misses its latency target. Elsewhere
    (no per-thread priority) it does nothing.
    """
    if nice <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + nice)
    except OSError as error:  # a sandbox that forbids it: run at normal priority
        log.warning("could not lower the worker's priority", extra=error_details(error))
