"""Append one dialogue turn to its session's buffer; queue extraction when the buffer is full.

The first turn of a new session also closes the thread's earlier sessions: the turns they still
buffer (fewer than the threshold, so no job was queued for them) are queued for a forced
extraction, as if each client had ended its sitting with `force_summary`.
"""

from __future__ import annotations

import logging

from memory_engine.engine import Engine
from memory_engine.errors import Unavailable
from memory_engine.extraction.batching import extraction_point, job_due
from memory_engine.models.api import ConsolidateRequest, ConsolidateResponse
from memory_engine.models.domain import Session, Turn
from memory_engine.models.messages import ExtractionJob

log = logging.getLogger("memory_engine.consolidate")


def run(engine: Engine, tenant: str, request: ConsolidateRequest) -> ConsolidateResponse:
    """One conditional store write, plus one queue send when the buffer crosses the threshold.

    Idempotent on `new_dialog.uuid`: a replay with the same content changes nothing stored (it
    queues the job again while a batch's worth is buffered); other content under the same uuid is
    a Conflict, and so is a turn naming another thread than its session's (the store checks both
    in its one write: no read here).
    """
    now = engine.clock.now()
    dialog = request.new_dialog
    session = Session(
        tenant=tenant,
        session_uuid=request.session_uuid,
        parent_session_uuid=request.parent_session_uuid,
        user_name=request.user_name,
        language=request.language,
        created_at=now,
    )
    turn = Turn(
        tenant=tenant,
        session_uuid=request.session_uuid,
        dialog_uuid=dialog.uuid,
        seq=0,
        query=dialog.query,
        answer=dialog.answer,
        user_name=request.user_name,
        npc_id=dialog.npc_id,
        timestamp=dialog.timestamp or now,
        created_at=now,
        length_limit=request.options.length_limit,
        memory_ttl_seconds=request.options.memory_ttl_seconds,
    )
    outcome = engine.store.append_turn(session, turn)
    if outcome.created:
        engine.arrivals.buffered(turn)  # in-process only: no write, no message
    limits = engine.limits
    after = outcome.buffered_count
    point = extraction_point(limits.extraction_threshold, limits.batch_size)
    queued = True
    if request.options.force_summary and after > 0:
        engine.queue.send(ExtractionJob(tenant=tenant, session_uuid=request.session_uuid, force=True))
    elif job_due(outcome.created, after, point, limits.batch_size):  # a replay queues again: see job_due
        engine.queue.send(ExtractionJob(tenant=tenant, session_uuid=request.session_uuid))
    else:
        queued = False
    if outcome.session_created and outcome.created and limits.close_earlier_sessions:
        close_earlier_sessions(engine, tenant, request.parent_session_uuid, request.session_uuid)
    return ConsolidateResponse(
        message=None if outcome.created else "duplicate dialog ignored",
        extraction_queued=queued,
        buffered=after,
    )


def close_earlier_sessions(engine: Engine, tenant: str, thread: str, opened: str) -> list[str]:
    """Queue a forced extraction for each other session of `thread` that still buffers turns.

    Best effort: the new turn is already stored, and leftovers stay retrievable as raw turns, so
    a failure here is logged rather than turned into an error for an accepted turn. Returns the
    sessions it queued.
    """
    try:
        buffered = engine.store.buffered_turns_in_threads(tenant, [thread])
        waiting = sorted({turn.session_uuid for turn in buffered} - {opened})
        for session_uuid in waiting:
            engine.queue.send(ExtractionJob(tenant=tenant, session_uuid=session_uuid, force=True))
    except Unavailable:
        log.warning("could not close the earlier sessions of a thread; their turns stay buffered")
        return []
    return waiting
