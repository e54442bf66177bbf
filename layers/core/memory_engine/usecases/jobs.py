"""The worker's one entry point: a queued job of any kind, routed to its use case."""

from __future__ import annotations

from typing import assert_never

from memory_engine.engine import Engine
from memory_engine.models.messages import ChatMemoryJob, ExtractionJob, ForgetUserJob, Job
from memory_engine.usecases import chat_memory, extract, forget_user


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
    assert_never(job)
