"""The queue's records: a job in hand, a parked (dead) job and a tenant's snapshot of the queue.

Records, not ports: the queue ports (`ports.queue`) pass them, and the inspector's answers
(`models.inspect`) and the operators' `jobs` commands carry them.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import ConfigDict

from memory_engine.models.base import Model
from memory_engine.models.messages import Job


class ReceivedJob(Model):
    """A job in hand: ack it when done, release it to have it delivered again."""

    model_config = ConfigDict(frozen=True)

    receipt: str
    job: Job
    receive_count: int


class DeadJob(Model):
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


class QueueSnapshot(Model):
    """One tenant's jobs in the queue, oldest first.

    None where the backend cannot list them: on SQS only the worker may receive from the queues
    (a receive would also count towards dead-lettering and hold the session's FIFO group), so
    neither waiting nor dead jobs are read there; the local queue lists both.
    """

    pending: list[Job] | None
    dead: list[DeadJob] | None
