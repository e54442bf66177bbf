"""The worker's side of chat memory: keep the exchange, then merge the user's new facts."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.models.domain import Session, Turn, scope_key
from memory_engine.models.messages import ChatMemoryJob, chat_session_uuid
from memory_engine.usecases import facts
from memory_engine.usecases.facts import FactChange

CHAT_USER_NAME = "user"


def user_scope(userid: str) -> dict[str, str]:
    """The memory-bank scope of a chat user's facts (docs/api.md §3)."""
    return {"userid": userid}


def run(engine: Engine, job: ChatMemoryJob) -> list[FactChange]:
    """Store the exchange as a turn of the user's chat session (created on first sight: that is
    when the user comes to exist), then merge facts from the user's words into their scope.

    Safe to run again for the same job: the turn is idempotent on its dialog uuid, and facts
    already stored are kept rather than added twice.
    """
    now = engine.clock.now()
    session_uuid = chat_session_uuid(job.userid)
    session = Session(
        tenant=job.tenant,
        session_uuid=session_uuid,
        parent_session_uuid=scope_key(user_scope(job.userid)),
        user_name=CHAT_USER_NAME,
        language=job.language,
        created_at=now,
    )
    turn = Turn(
        tenant=job.tenant,
        session_uuid=session_uuid,
        dialog_uuid=job.dialog_uuid,
        seq=0,
        query="\n".join(job.user_messages),
        answer=job.answer,
        user_name=CHAT_USER_NAME,
        timestamp=now,
        created_at=now,
    )
    engine.store.append_turn(session, turn)
    origin = {"source": "chat", "dialog_uuid": job.dialog_uuid}
    return facts.merge(engine, job.tenant, user_scope(job.userid), job.user_messages, job.language, origin)
