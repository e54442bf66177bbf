"""The game API's write: recorded NPC chats join a session as Type 1 turns."""

from __future__ import annotations

import uuid

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, NotFound, Unavailable
from memory_engine.extraction.batching import extraction_point, job_due
from memory_engine.models.domain import Turn, TurnType
from memory_engine.models.game import RecordMemoryRequest, RecordMemoryResponse
from memory_engine.models.messages import ExtractionJob


def run(engine: Engine, tenant: str, request: RecordMemoryRequest) -> RecordMemoryResponse:
    """Append the chats in call order to the session's buffer, where they feed extraction like any
    other turn (a job is queued when the buffer reaches the extraction point, or again on a replay
    while it is there). The session must exist.

    A chat with a `uuid` is idempotent on it, as consolidate is; one without gets a fresh uuid.
    """
    session = engine.store.get_session(tenant, request.session_id)
    if session is None:
        raise NotFound(
            f"No session '{request.session_id}': record chats into a session that exists "
            "(created by its first consolidated turn).",
            [{"field": "session_id", "message": "unknown session"}],
        )
    now = engine.clock.now()
    point = extraction_point(engine.limits.extraction_threshold, engine.limits.batch_size)
    saved = 0
    queued = False
    for position, chat in enumerate(request.chats):
        turn = Turn(
            tenant=tenant,
            session_uuid=session.session_uuid,
            dialog_uuid=chat.uuid or f"rec-{uuid.uuid4().hex}",
            seq=0,
            query=chat.message,
            answer=chat.reply,
            user_name=session.user_name,
            npc_id=chat.npc_id,
            type=TurnType.RECORDED,
            timestamp=now,
            created_at=now,
        )
        try:
            outcome = engine.store.append_turn(session, turn)
        except Conflict as error:
            raise Conflict(
                f"chats[{position}].uuid {chat.uuid} was already used in this session for other content "
                f"(the {saved} chat(s) before it were saved): give every chat its own uuid.",
                [{"field": f"chats.{position}.uuid", "message": "already used for other content"}],
            ) from error
        except Unavailable as error:
            raise Unavailable(
                f"Saved {saved} of {len(request.chats)} chats, then the store failed ({error.message}). "
                f"Send chats {position + 1}-{len(request.chats)} again."
            ) from error
        if outcome.created:
            saved += 1
        # A replayed chat queues again too (see job_due): its request may be the retry of a 503
        # whose chats were stored but whose job never reached the queue.
        if not queued and job_due(outcome.created, outcome.buffered_count, point, engine.limits.batch_size):
            engine.queue.send(ExtractionJob(tenant=tenant, session_uuid=session.session_uuid))
            queued = True
    return RecordMemoryResponse(msg=f"successfully saved {saved} memories")
