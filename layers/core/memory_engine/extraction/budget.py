"""When an extraction job stops taking batches and leaves the rest to a job of its own.

The local worker runs one job at a time for every tenant: a session with long texts (or many
buffered turns, or a slow LLM) would hold up everyone's extraction for as long as its job ran.
So a job works for a bounded time and a bounded amount of embedding, then queues a continuation
(`ExtractionJob.through_seq`) behind the jobs already waiting and returns: the other sessions'
jobs run in between, and the session's own batches stay in order (its message group). In a Lambda
the same rule keeps a job inside the function's timeout: it stops while the time left still
holds two more batches like its longest, instead of being killed and retried until it dies.

A job always takes its first batch, so every job makes progress.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from memory_engine import deadline
from memory_engine.limits import Limits

# Kept free at the end of a Lambda's time beyond two batches: the continuation's send, the ack.
LAMBDA_RESERVE_S = 10.0


@dataclass
class JobBudget:
    max_seconds: float
    max_chars: int
    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)
    spent_chars: int = 0
    batches: int = 0
    longest_batch_s: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.clock()

    @classmethod
    def of(cls, limits: Limits) -> JobBudget:
        """Locally `worker_job_seconds`; in a Lambda its own remaining time decides (the time
        budget is for sharing one local worker fairly, which Lambda's concurrency does there:
        `Limits.job_seconds` is infinite there)."""
        return cls(limits.job_seconds, limits.extraction_job_max_chars)

    def spend(self, chars: int) -> None:
        """Count characters embedded for the job (each text as capped)."""
        self.spent_chars += chars

    def batch_done(self, began: float) -> None:
        """A batch that began at `began` (this budget's clock) was written."""
        self.batches += 1
        self.longest_batch_s = max(self.longest_batch_s, self.clock() - began)

    def over(self, more_chars: int = 0) -> bool:
        """True once the job has run its time, or would embed more than its characters with
        `more_chars` more."""
        return (
            self.spent_chars + more_chars > self.max_chars or self.clock() - self.started >= self.max_seconds
        )

    def exhausted(self) -> bool:
        """True once the job should leave its remaining batches to a new job (never before its first)."""
        if self.batches == 0:
            return False
        return self.over() or deadline.current().remaining() < 2 * self.longest_batch_s + LAMBDA_RESERVE_S
