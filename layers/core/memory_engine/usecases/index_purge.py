"""Deleting memories from the search index, and once more later where the index is eventually
consistent, so that a memory deleted right after it was written leaves no copy behind.

OpenSearch (Serverless above all: no refresh, generated document ids) deletes the copies a search
finds; a copy written a few seconds before is not found yet. Every use case that deletes from the
index goes through `delete`, and every one that indexes what it just stored through
`index_written` (which drops what a concurrent delete removed meanwhile): the index is cleaned at
once, and an `IndexPurgeJob` due `settle_seconds` later has the worker delete the same memories
again. An index that shows a write at once (the local one) gets no job.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from memory_engine.engine import Engine
from memory_engine.indexing.documents import drop_gone, index_stored, upsert
from memory_engine.models.domain import Memory, Turn
from memory_engine.models.messages import MAX_PURGE_IDS, IndexPurgeJob
from memory_engine.ports import EventuallyConsistent


def delete(engine: Engine, tenant: str, memory_ids: Sequence[str]) -> None:
    """Delete the memories' documents (their turns' too) now, and again once the index settles."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return
    engine.index.delete(tenant, ids)
    again_later(engine, tenant, ids)


def again_later(engine: Engine, tenant: str, memory_ids: Sequence[str]) -> None:
    """Queue the second delete of memories already deleted from the index once, if it needs one."""
    ids = list(dict.fromkeys(memory_ids))
    index = engine.index
    settle = index.settle_seconds if isinstance(index, EventuallyConsistent) else 0.0
    if not ids or settle <= 0:
        return
    due = engine.clock.now() + timedelta(seconds=settle)
    for start in range(0, len(ids), MAX_PURGE_IDS):
        chunk = ids[start : start + MAX_PURGE_IDS]
        engine.queue.send(IndexPurgeJob(tenant=tenant, memory_ids=chunk, not_before=due))


def index_written(engine: Engine, memories: Sequence[Memory], turns: Sequence[Turn] | None = None) -> None:
    """Index memories just written to the store (`indexing.documents.index_stored`); those a
    concurrent delete removed meanwhile are dropped at once and again once the index settles,
    since the upsert itself may not show yet when the first drop searches for it."""
    gone = index_stored(engine.store, engine.index, memories, engine.retrieval, turns)
    if gone:
        again_later(engine, memories[0].tenant, gone)


def claim_indexed(engine: Engine, memory: Memory, turns: Sequence[Turn]) -> bool:
    """Index a memory, then write it to the store (claiming its turns, `Store.save_memory`), in
    that order: its turns leave the buffered search only once its documents are in the index, so
    no turn is unfindable between the two. A memory the store refuses (another run claimed the
    turns) or fails to write has its documents deleted again. Returns whether it was written."""
    upsert(engine.store, engine.index, [memory], engine.retrieval, turns)
    try:
        saved = engine.store.save_memory(memory)
    except Exception:
        delete(engine, memory.tenant, [memory.memory_id])
        raise
    if not saved:
        delete(engine, memory.tenant, [memory.memory_id])
    elif drop_gone(engine.store, engine.index, [memory]):
        again_later(engine, memory.tenant, [memory.memory_id])
    return saved


def wait_seconds(engine: Engine, job: IndexPurgeJob) -> float:
    """How long the job must still wait before it runs (0: due)."""
    return max(0.0, (job.not_before - engine.clock.now()).total_seconds())


def run(engine: Engine, job: IndexPurgeJob) -> None:
    """The second delete (the worker runs it once due); a no-op for what is gone already."""
    engine.index.delete(job.tenant, job.memory_ids)
