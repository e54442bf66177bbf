"""The worker's one entry point: a queued job of any kind, routed to its use case; and what
happens when it fails (retried later with a jittered exponential backoff, then parked as dead).

Both workers go through `attempt`: the local thread and the SQS-triggered Lambda.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, assert_never

from memory_engine import deadline
from memory_engine.edge.logsafe import error_details
from memory_engine.engine import Engine
from memory_engine.errors import Cancelled, MemoryEngineError
from memory_engine.limits import Limits
from memory_engine.models.messages import ChatMemoryJob, ExtractionJob, ForgetUserJob, IndexPurgeJob, Job
from memory_engine.models.queue import ReceivedJob, unsettled_reason
from memory_engine.ports import JobSource
from memory_engine.usecases import chat_memory, extract, forget_user, index_purge, lease
from memory_engine.usecases.dead_jobs import what_retries

log = logging.getLogger("memory_engine.worker")

Outcome = Literal["done", "retry", "dead"]
MAX_ERROR_CHARS = 2_000


# Beyond a Lambda's remaining time: its runtime's own end (it is stopped at its timeout, then the
# event source settles the message).
LAMBDA_TAIL_S = 30.0


def lease_seconds(limits: Limits) -> float:
    """How long a job in hand stays invisible at a time: its worst case by the settings
    (`job_visibility_seconds`), or, under a deadline that ends sooner than forever (a Lambda's
    remaining time), at least until that deadline has passed, so that a job whose renewals all
    fail is never handed out again while it can still run."""
    remaining = deadline.current().remaining()
    if remaining == float("inf"):
        return limits.job_visibility_seconds
    return max(limits.job_visibility_seconds, remaining + LAMBDA_TAIL_S)


def run(engine: Engine, job: Job, redelivered: bool = False) -> object:
    """Run one job to completion; raising makes the queue deliver it again (then dead-letter it).

    `redelivered` (the second delivery on; SQS: ApproximateReceiveCount > 1) lets an extraction
    finish what a failed run left, index included."""
    if isinstance(job, ExtractionJob):
        return extract.run(engine, job, redelivered)
    if isinstance(job, ChatMemoryJob):
        return chat_memory.run(engine, job)
    if isinstance(job, ForgetUserJob):
        return forget_user.forget(engine, job.tenant, job.userid)
    if isinstance(job, IndexPurgeJob):
        index_purge.run(engine, job)
        return None
    assert_never(job)


@dataclass(frozen=True)
class RetryPolicy:
    """How often a failing job runs and how long it waits in between.

    `attempts` deliveries at most; after the n-th failure the job waits about base·2ⁿ⁻¹ seconds
    (capped at `max_delay_s`), with "equal jitter": half of that fixed, half drawn at random, so
    jobs that failed together (an LLM outage) do not all come back in the same second.
    """

    attempts: int = 3
    base_delay_s: float = 10.0
    max_delay_s: float = 900.0

    @classmethod
    def of(cls, limits: Limits) -> RetryPolicy:
        return cls(
            attempts=limits.worker_max_receives,
            base_delay_s=limits.worker_retry_base_seconds,
            max_delay_s=limits.worker_retry_max_seconds,
        )

    def delay(self, failures: int, draw: Callable[[], float] = random.random) -> float:
        """Seconds to wait after the `failures`-th failure (1, 2, ...)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** max(0, failures - 1))
        return ceiling / 2 + draw() * ceiling / 2


def describe(error: BaseException) -> str:
    """What a dead job records of its failure: the engine's own messages say what went wrong
    without quoting user text; for anything else only the type (its message might)."""
    if isinstance(error, MemoryEngineError):
        text = f"{type(error).__name__}: {error.message}"
    else:
        text = f"{type(error).__name__} (see the worker log)"
    spent = spent_on(error)
    if spent:
        # First, so the cut for length never drops it.
        about = "about " if spent.get("tokens_estimated") else ""
        text = (
            f"[{spent.get('requests', 0)} LLM requests, {about}{spent.get('prompt_tokens', 0)} prompt + "
            f"{spent.get('completion_tokens', 0)} completion tokens spent] {text}"
        )
    return text[:MAX_ERROR_CHARS]


def dead_reason(job: Job, reason: str) -> str:
    """A dead job's error: why it failed, then what queues it again (never cut off)."""
    note = what_retries(job)
    return f"{reason[: MAX_ERROR_CHARS - len(note) - 1]} {note}"


def spent_on(error: BaseException) -> dict[str, int]:
    """What a failed model call cost, when the error says (the LLM adapter's errors do)."""
    spent = getattr(error, "spent", None)
    return dict(spent) if isinstance(spent, dict) else {}


def attempt(
    engine: Engine,
    source: JobSource | None,
    message: ReceivedJob,
    policy: RetryPolicy,
    draw: Callable[[], float] = random.random,
    visibility_seconds: float | None = None,
) -> Outcome:
    """Run a received job and settle a failure: retried after a backoff while attempts remain,
    else parked as dead with its error. While it runs, its receipt is renewed for
    `visibility_seconds` (default: `lease_seconds`) at a time, and a
    delivery past its attempts (the runs before never settled) is parked unrun, saying so.
    "done" jobs are left for the caller to ack (the Lambda's event source mapping deletes them
    itself). Without a `source` to settle with (a queue that is not polled, as in handler
    tests), a failure is raised for the queue's own redelivery.

    A job received before its time (an `IndexPurgeJob` waiting for the index to settle: SQS FIFO
    has no per-message delay) is hidden again for the rest of its wait, and runs then; that
    receive counts towards its attempts. Without a source it runs at once."""
    if source is not None and message.receive_count > policy.attempts:
        # Every failure it reported was settled by the attempts before: a delivery past them
        # follows runs that never settled (a Lambda timed out or crashed). Parked here, with that
        # said, rather than left to the queue's redrive, which keeps no reason.
        source.bury(message, dead_reason(message.job, unsettled_reason(message.receive_count - 1)))
        log.warning("job delivered past its attempts; parked as dead", extra={"kind": message.job.kind})
        return "dead"
    wait = index_purge.wait_seconds(engine, message.job) if isinstance(message.job, IndexPurgeJob) else 0.0
    if wait > 0 and source is not None:
        source.retry_later(message.receipt, wait, "not due yet")
        log.info("job not due yet; hidden for %.0f s", wait, extra={"kind": message.job.kind})
        return "retry"
    try:
        if source is None:
            run(engine, message.job, message.receive_count > 1)
        else:
            # Its receipt renewed while it runs: never handed out again meanwhile (usecases.lease).
            with lease.held(source, message.receipt, visibility_seconds or lease_seconds(engine.limits)):
                run(engine, message.job, message.receive_count > 1)
    except Cancelled:
        raise  # not the job's failure: the worker is stopping, and releases it for next time
    except Exception as error:
        if source is None:
            raise
        reason = describe(error)
        details = {
            "kind": message.job.kind,
            "receive": message.receive_count,
            **spent_on(error),
            **error_details(error),
        }
        # A final error (the model keeps missing the schema) would fail the same way again.
        if message.receive_count >= policy.attempts or getattr(error, "final", False) is True:
            source.bury(message, dead_reason(message.job, reason))
            log.warning("job failed for the last time; parked as dead", extra=details)
            return "dead"
        delay = policy.delay(message.receive_count, draw)
        source.retry_later(message.receipt, delay, reason)
        log.warning("job failed; retried in %.0f s", delay, extra=details)
        return "retry"
    return "done"
