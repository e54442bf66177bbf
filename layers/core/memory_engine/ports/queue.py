"""The queue ports: sending jobs, consuming them (acked, retried, parked) and listing them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from memory_engine.models.messages import Job


class Queue(Protocol):
    """Hands jobs to the worker (SQS FIFO on AWS, a table + thread locally).

    A job of any kind (`models.messages.Job`) goes in its `group_id()` message group; consumers
    parse bodies with `models.messages.parse_job`.
    """

    def send(self, job: Job) -> None:
        """Queue a job. Never dropped when an identical job is in flight or was already done; one
        identical to a job still waiting may be dropped (local) or delivered (SQS), since running a
        job twice is harmless: every job is idempotent."""
        ...


class ReceivedJob(BaseModel):
    """A job in hand: ack it when done, release it to have it delivered again."""

    model_config = ConfigDict(frozen=True)

    receipt: str
    job: Job
    receive_count: int


class DeadJob(BaseModel):
    """A job parked after its last failed attempt, with what it failed on (for `jobs list|retry`).

    `error` is `unsettled_reason` when no run settled it (killed, crashed, timed out); "" only
    for an SQS message the queue's redrive policy parked (a body that is not a job)."""

    id: str  # the dead letter's id in its queue (local row id; SQS message id)
    job: Job
    error: str = ""
    receive_count: int = 0
    dead_at: datetime | None = None
    # Filled in for operators (usecases.dead_jobs): true when its session's turns were extracted
    # since, so retrying it would find nothing to do; null where that cannot be told.
    resolved: bool | None = None


def unsettled_reason(receives: int) -> str:
    """The error of a job parked because no run settled it: not a failure the job reported, so
    say what can cause it (for `jobs list` and the inspector)."""
    return (
        f"Delivered {receives} times and never settled: each run ended without finishing or failing "
        "it (the worker was killed, crashed, or ran out of time)."
    )


@runtime_checkable
class JobSource(Protocol):
    """The consumer side of the queue: received jobs are acked, retried later, or parked as dead.

    The local worker polls it itself; on AWS the Lambda service polls SQS and hands the worker its
    records, and the worker settles failures through the same methods (`usecases.jobs.attempt`).
    """

    def receive(self, max_messages: int = 1, visibility_seconds: float = 30) -> list[ReceivedJob]: ...

    def ack(self, receipt: str) -> bool: ...

    def release(self, receipt: str, error: str | None = None) -> bool:
        """Deliver the job again now; `error` says why its run ended (kept where the queue can)."""
        ...

    def extend(self, receipt: str, visibility_seconds: float) -> bool:
        """Keep a job in hand hidden for `visibility_seconds` from now (SQS: ChangeMessageVisibility),
        so a job that runs longer than its first visibility is not handed out again while it works
        (`usecases.lease`). False when the receipt is stale (acked, or delivered again since)."""
        ...

    def retry_later(self, receipt: str, delay_seconds: float, error: str) -> bool:
        """Deliver the job again after `delay_seconds` (its group waits meanwhile: FIFO order)."""
        ...

    def bury(self, message: ReceivedJob, error: str) -> None:
        """Park the job among the dead letters with the error it failed on; it is no longer queued."""
        ...


@runtime_checkable
class SingleConsumerQueue(Protocol):
    """A queue with one consumer (the local worker): at its start, every job the queue shows in
    hand was held by a consumer that died, and can be handed out again at once."""

    def release_in_flight(self) -> int:
        """Make every job in hand visible again now; returns how many there were."""
        ...


class QueueSnapshot(BaseModel):
    """One tenant's jobs in the queue, oldest first.

    None where the backend cannot list them: on SQS only the worker may receive from the queues
    (a receive would also count towards dead-lettering and hold the session's FIFO group), so
    neither waiting nor dead jobs are read there; the local queue lists both.
    """

    pending: list[Job] | None
    dead: list[DeadJob] | None


@runtime_checkable
class QueueInspector(Protocol):
    """What the memory inspector reads of a queue: a tenant's pending and dead jobs."""

    def snapshot(self, tenant: str) -> QueueSnapshot: ...


@runtime_checkable
class DeadLetters(Protocol):
    """The dead jobs of a queue, for operators: list them, send them back to the queue."""

    def dead_letters(self) -> list[DeadJob]:
        """Every dead job, oldest first."""
        ...

    def redrive(self, ids: Sequence[str] | None = None) -> list[DeadJob]:
        """Queue the dead jobs named by id (None: all) again, as new jobs; returns those queued."""
        ...
