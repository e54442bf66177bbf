"""Waiting for the worker in the e2e tests: on its work, not on a clock.

A fixed wait fails on a loaded machine while the job it waits for is still running (the
`ingested` fixture's 30 s failed once at load 17). `wait_on_work` waits as long as the queue
shows the tenant's job waiting or in a worker's hands, fails at once when a job is parked dead
(with the error it failed on), and gives up after `idle_seconds` only when no job is left to
wait for; `ceiling` bounds the whole wait below the suite's per-test timeout (pyproject).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

# Below pytest-timeout's 300 s per test: the fixture's wait must fail with its own reason first.
CEILING_S = 240.0
POLL_S = 0.2


class Dead(Protocol):
    id: str
    error: str


class Queue(Protocol):
    """What `GET /v1/inspect/queue` answers (the client's `QueueResponse`)."""

    @property
    def pending(self) -> list[Any] | None: ...

    @property
    def dead(self) -> list[Any] | None: ...


def wait_on_work(
    condition: Callable[[], Any],
    queue: Callable[[], Queue],
    idle_seconds: float = 30.0,
    ceiling: float = CEILING_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Poll until `condition()` is truthy and return its value. Fails when a job the queue had not
    parked before is parked dead, when the queue showed no job for `idle_seconds` (nothing more
    will come), or after `ceiling` seconds in all."""
    started = clock()
    dead_before = {job.id for job in queue().dead or []}
    work_seen = started
    while True:
        value = condition()
        if value:
            return value
        now, shown = clock(), queue()
        parked = [job for job in shown.dead or [] if job.id not in dead_before]
        if parked:
            raise AssertionError(f"an extraction job was parked dead while waiting: {parked[0].error!r}")
        if shown.pending:  # waiting or in a worker's hands: the work goes on
            work_seen = now
        if now - work_seen > idle_seconds:
            raise AssertionError(f"condition not met, and no job queued or running for {idle_seconds:g} s")
        if now - started > ceiling:
            raise AssertionError(f"condition not met in {ceiling:g} s, jobs still queued: {shown.pending}")
        sleep(POLL_S)


class Started(Protocol):
    """A started subprocess (`subprocess.Popen`): whether it has exited."""

    def poll(self) -> int | None: ...


def wait_started(
    ready: Callable[[], bool],
    process: Started,
    what: str,
    ceiling: float = CEILING_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Poll until `ready()` (a server answers) while `process` runs. A process that exits fails it
    at once; one still starting is waited for up to `ceiling` seconds, not a fixed minute: with
    both cores busy a server's imports alone took 72 s once (a fixed 60 s failed 12 tests)."""
    started = clock()
    while not ready():
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited before it answered (code {process.poll()})")
        if clock() - started > ceiling:
            raise RuntimeError(f"{what} did not answer in {ceiling:g} s while its process ran")
        sleep(POLL_S)
