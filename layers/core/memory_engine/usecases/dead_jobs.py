"""Dead jobs as an operator reads them: what queues each one again, and which ones the work has
been done for since (`jobs list`, the inspector's queue view)."""

from __future__ import annotations

from collections.abc import Sequence

from memory_engine.extraction.batching import cut_batches
from memory_engine.limits import Limits
from memory_engine.models.messages import ExtractionJob, Job
from memory_engine.models.queue import DeadJob
from memory_engine.ports import Store

RETRY_COMMAND = "`memory-engine jobs retry <id>`"


def what_retries(job: Job) -> str:
    """The end of a dead job's error: nothing retries it by itself any more, so say what does."""
    if isinstance(job, ExtractionJob):
        return (
            "Parked as dead after its last attempt; its turns stay buffered and searchable. Its "
            "extraction is queued again by the session's next turns or by the sweep (while the "
            f"buffer is at or past the extraction point), or now by {RETRY_COMMAND}."
        )
    return f"Parked as dead after its last attempt; only {RETRY_COMMAND} queues it again."


def resolved(store: Store, limits: Limits, job: Job) -> bool | None:
    """True when running the job again would find nothing to do (its session's turns were
    extracted since), False when it would, None where that cannot be told (a chat exchange or a
    forget job carries its own work)."""
    if not isinstance(job, ExtractionJob):
        return None
    buffered = store.buffered_turns(job.tenant, job.session_uuid)
    return not cut_batches(buffered, limits.batch_size, limits.extraction_threshold, job.force)


def with_resolution(store: Store, limits: Limits, dead: Sequence[DeadJob]) -> list[DeadJob]:
    """The dead jobs with `resolved` filled in."""
    return [entry.model_copy(update={"resolved": resolved(store, limits, entry.job)}) for entry in dead]
