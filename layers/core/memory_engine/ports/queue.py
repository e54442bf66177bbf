"""The queue ports: sending jobs, consuming them (acked, retried, parked) and listing them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory_engine.models.messages import Job
from memory_engine.models.queue import DeadJob, QueueSnapshot, ReceivedJob


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
