"""Queue extraction for every session whose buffer holds a full batch: the safety net behind the
one job a session gets when its buffer reaches the extraction point.

That job can die (the LLM was down for all its attempts) or be lost (a crash between the turn
write and the queue send); the buffer then stays full and, without this, no later event would
queue another. The local worker sweeps at start-up and every MEMORY_ENGINE_WORKER_SWEEP_SECONDS;
on AWS a scheduled EventBridge rule invokes the worker with a sweep event.

The same sweep removes what expired (`Memory.expires_at`): each expired memory goes as a delete
of it would (`usecases/delete.py`: the store's removal, its turns kept as forgotten history, and
the index purge), a bounded number per run. Reads skip an expired memory from the instant it
expires, so nothing waits on the sweep to stop being returned.

It also finishes the deletes a process left half-done (`unfinished_deletes`): each delete recorded
before its first change and not ended after its last, begun minutes ago, a bounded number per run.
Its own removal of expired memories is recorded the same way (`expire_recorded`).
"""

from __future__ import annotations

import logging
from contextlib import suppress

from memory_engine.engine import Engine
from memory_engine.errors import MemoryEngineError, NotFound
from memory_engine.extraction.batching import extraction_point
from memory_engine.models.deletes import DeleteIntent
from memory_engine.models.domain import Memory
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import RemovalOutcome
from memory_engine.usecases import (
    delete_intents,
    facts,
    index_purge,
    removed_facts,
    retention,
    unfinished_deletes,
)

log = logging.getLogger("memory_engine.sweep")

# Expired memories removed per sweep: the rest wait for the next sweep (a few minutes), and on
# AWS DynamoDB's TTL deletes any item the sweeps have not reached within its grace period.
EXPIRED_PER_SWEEP = 500
# Expired memories of one tenant recorded as one delete in flight (`delete_intents.begin_expiry`):
# the record names their sessions and turns, so it stays a few tens of KB.
EXPIRED_PER_RECORD = 100


def run(engine: Engine) -> list[ExtractionJob]:
    """Send one extraction job per session at or past the extraction point; returns them.

    A session that has a job waiting gets a twin, which the local queue drops and SQS delivers
    (a run that finds its batches taken does nothing): extraction is idempotent.
    """
    try:
        expire(engine)
    except MemoryEngineError as error:
        # The buffers' sweep (no turn lost) goes on; what expired is still never returned, and
        # the next sweep removes it (an index still being built on a table just upgraded, say).
        log.warning("sweep could not remove expired memories this time: %s", error.message)
    try:
        unfinished_deletes.finish_begun(engine)
    except MemoryEngineError as error:
        # As above: a delete left begun is finished by a later sweep.
        log.warning("sweep could not read the deletes left begun this time: %s", error.message)
    limits = engine.limits
    point = extraction_point(limits.extraction_threshold, limits.batch_size)
    buffers = engine.store.buffers()  # one read of the buffered turns serves both uses below
    sent = [
        ExtractionJob(tenant=buffer.tenant, session_uuid=buffer.session_uuid)
        for buffer in buffers
        if buffer.turns >= point
    ]
    for job in sent:
        engine.queue.send(job)
    if sent:
        log.info("sweep queued extraction for %d sessions with full buffers", len(sent))
    forced = {(job.tenant, job.session_uuid) for job in sent}
    sent += [
        job
        for job in retention.extract_past_retention(engine, buffers)
        if (job.tenant, job.session_uuid) not in forced
    ]
    return sent


def expire(engine: Engine, limit: int = EXPIRED_PER_SWEEP) -> list[tuple[str, str]]:
    """Remove up to `limit` expired memories, of every tenant, with the cascade of a delete;
    returns the (tenant, memory_id) removed. Each tenant's, up to EXPIRED_PER_RECORD at a time,
    are read, recorded (`delete_intents.begin_expiry`) and removed (`expire_recorded`)."""
    removed: list[tuple[str, str]] = []
    by_tenant: dict[str, list[str]] = {}
    for tenant, memory_id in engine.store.expired_memories(engine.clock.now(), limit):
        by_tenant.setdefault(tenant, []).append(memory_id)
    turns = 0
    for tenant, memory_ids in by_tenant.items():
        for start in range(0, len(memory_ids), EXPIRED_PER_RECORD):
            chunk = memory_ids[start : start + EXPIRED_PER_RECORD]
            read = engine.store.get_memories(tenant, chunk, vectors=False, expired=True)
            intent = delete_intents.begin_expiry(engine, tenant, chunk, read)
            turns += expire_recorded(engine, intent, read)
            removed += [(tenant, memory_id) for memory_id in chunk]
    if removed:
        log.info("sweep removed %d expired memories and %d raw turns past retention", len(removed), turns)
    return removed


def expire_recorded(engine: Engine, intent: DeleteIntent, read: dict[str, Memory]) -> int:
    """The removal of the expired memories `intent` recorded (`read`: those of them still stored,
    read before any change), then the record ended; returns the raw turns the tenant's retention
    removed. In a delete's order, each step harmless run again, so the sweep finishes a run that
    died half-way from its record (`unfinished_deletes.finish`): what the memories' own contents
    reopen first, while they are stored (the facts a merge retired for an expired fact, the key
    facts an extractor named as replaced by one); then the removals; then their documents purged,
    their statements taken out of their threads' records (by session, from the record) and,
    under a retention, the raw turns they were made of removed (from the record too)."""
    tenant, memories = intent.tenant, list(read.values())
    facts.reopen_replaced(engine, memories)  # an expired fact's: the facts retired for it
    removed_facts.unname_ahead(engine, memories)
    outcomes: list[RemovalOutcome] = []
    for memory_id in intent.memory_ids:
        # Deleted meanwhile (a user's delete, another sweep): its index purge still runs.
        with suppress(NotFound):
            outcomes.append(engine.store.delete_memory(tenant, memory_id))
    index_purge.delete(engine, tenant, intent.memory_ids)
    # What an expired memory's statements had replaced is reopened (`removed_facts`), by its session.
    by_session: dict[str, list[str]] = {}
    for memory_id, session_uuid in intent.sessions.items():
        by_session.setdefault(session_uuid, []).append(memory_id)
    removed_facts.forget_in_sessions(engine, tenant, by_session, [m for o in outcomes for m in o.removed])
    # Under a tenant's retention the raw turns go too, once their memory (and its documents) went.
    left = [
        RemovalOutcome(session_uuid=session_uuid, forgotten_dialogs=dialogs)
        for session_uuid, dialogs in intent.dialogs.items()
    ]
    turns = retention.forget_turns(engine, tenant, left)
    engine.store.end_delete(intent)
    return turns
