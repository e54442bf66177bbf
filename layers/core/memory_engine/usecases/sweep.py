"""Queue extraction for every session whose buffer holds a full batch: the safety net behind the
one job a session gets when its buffer reaches the extraction point.

That job can die (the LLM was down for all its attempts) or be lost (a crash between the turn
write and the queue send); the buffer then stays full and, without this, no later event would
queue another. The local worker sweeps at start-up and every MEMORY_ENGINE_WORKER_SWEEP_SECONDS;
on AWS a scheduled EventBridge rule invokes the worker with a sweep event.
"""

from __future__ import annotations

import logging

from memory_engine.engine import Engine
from memory_engine.extraction.batching import extraction_point
from memory_engine.models.messages import ExtractionJob

log = logging.getLogger("memory_engine.sweep")


def run(engine: Engine) -> list[ExtractionJob]:
    """Send one extraction job per session at or past the extraction point; returns them.

    A session that has a job waiting gets a twin, which the local queue drops and SQS delivers
    (a run that finds its batches taken does nothing): extraction is idempotent.
    """
    limits = engine.limits
    point = extraction_point(limits.extraction_threshold, limits.batch_size)
    sent = [
        ExtractionJob(tenant=tenant, session_uuid=session_uuid)
        for tenant, session_uuid in engine.store.full_buffers(point)
    ]
    for job in sent:
        engine.queue.send(job)
    if sent:
        log.info("sweep queued extraction for %d sessions with full buffers", len(sent))
    return sent
