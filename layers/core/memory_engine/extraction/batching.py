"""How buffered turns become extraction batches, and when a job is queued."""

from __future__ import annotations

from collections.abc import Sequence

from memory_engine.models.domain import Turn


def extraction_point(threshold: int, batch_size: int) -> int:
    """Buffered turns at which extraction has work: the threshold, and never less than one whole
    batch (with a threshold below the batch size, nothing could be cut until a batch is full)."""
    return max(threshold, batch_size)


def crossed_threshold(before: int, after: int, threshold: int) -> bool:
    """True when the buffer grew from below the threshold to at or above it."""
    return before < threshold <= after


def job_due(created: bool, buffered: int, point: int, every: int) -> bool:
    """Whether a turn write that leaves `buffered` turns in its session's buffer queues extraction.

    A new turn queues a job when it brings the buffer to the extraction point. Past twice the
    point it queues one again each `every` turns (a batch): a live job cuts the buffer back under a
    batch and queues one itself for what arrived meanwhile, so a buffer that kept growing that far
    has no live job (it died, say while the LLM was down, or was lost in a crash). A twin of a live
    job costs one run that finds nothing to do. A replay (the turn was already stored) queues one
    again while the buffer is at or past the point: it may be the retry of a 503 whose turn was
    stored but whose job never reached the queue. Extraction is idempotent, so a redundant job is
    harmless.
    """
    if created:
        stuck = buffered > 2 * point and (buffered - point) % max(1, every) == 0
        return buffered == point or stuck
    return buffered >= point


def cut_batches(buffered: Sequence[Turn], batch_size: int, threshold: int, force: bool) -> list[list[Turn]]:
    """Cut the oldest buffered turns into complete batches of consecutive turns.

    Without `force`, nothing is cut until the buffer holds `threshold` turns, then every complete
    batch is (20 buffered, batches of 8 → 2 batches, the newest 4 stay). With `force`, a last
    shorter batch takes the rest. A stale or duplicated job therefore finds nothing to do.
    """
    ordered = sorted(buffered, key=lambda turn: turn.seq)
    if not force and len(ordered) < threshold:
        return []
    batches = [ordered[start : start + batch_size] for start in range(0, len(ordered), batch_size)]
    if batches and not force and len(batches[-1]) < batch_size:
        batches.pop()
    return batches
