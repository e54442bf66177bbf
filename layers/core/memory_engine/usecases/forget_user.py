"""Delete everything remembered about a chat user: facts, raw exchanges, index entries."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput, NotFound
from memory_engine.models.chat import UserMemoryDeleted, chat_user_id, looks_like_uuid, memory_userid
from memory_engine.models.domain import scope_key
from memory_engine.models.messages import ForgetUserJob, chat_session_uuid
from memory_engine.ports import RemovalOutcome
from memory_engine.usecases import index_purge
from memory_engine.usecases.chat_memory import user_scope

_PAGE = 500


def run(engine: Engine, tenant: str, userid: str) -> UserMemoryDeleted:
    """DELETE /v1/users/{userid}/memory: delete now, and queue the same delete behind any exchange
    of this user still waiting in the queue, so nothing recorded late survives. Deleting a user
    with nothing stored succeeds with zero counts."""
    user = memory_userid(userid)
    if user is None and looks_like_uuid(userid):
        raise InvalidInput(
            f"'{userid}' is not a UUID v4: send the userid the chat requests used.",
            [{"field": "userid", "message": "must be a UUID v4"}],
        )
    if user is None:  # OpenAI's `user` of another form, as the chat requests sent it
        user = chat_user_id(userid)
    outcome = forget(engine, tenant, user)
    engine.queue.send(ForgetUserJob(tenant=tenant, userid=user))
    return UserMemoryDeleted(
        userid=user,
        deleted_memories=len(outcome.deleted_memories),
        deleted_dialogs=len(outcome.deleted_dialogs),
    )


def forget(engine: Engine, tenant: str, userid: str) -> RemovalOutcome:
    """Every memory of the user's scope (`{"userid": ...}`, exact), then their chat session with
    its turns and any memory extracted from it, and the scope's own records (character registry,
    statements record); the index entries go with them.

    Recorded before its first change and the record removed after its last (`delete_intents`):
    a process that dies half-way leaves the rest to the sweep, which runs it again (`finish`).
    Each page's documents are purged before its memories go, so a run again, which lists only
    what is still stored, leaves no document behind; deleting what went already changes nothing."""
    outcome = _forget(engine, tenant, userid, pages=None)
    assert outcome is not None  # unbounded: never left part-way
    return outcome


def finish(engine: Engine, tenant: str, userid: str, pages: int) -> bool:
    """The sweep's rerun of a forget a process left begun, at most `pages` pages of the user's
    memories: True when it ended; False when more are left, its record begun anew, so a later
    sweep goes on from what is still stored."""
    return _forget(engine, tenant, userid, pages) is not None


def _forget(engine: Engine, tenant: str, userid: str, pages: int | None) -> RemovalOutcome | None:
    from memory_engine.usecases import delete_intents

    thread = scope_key(user_scope(userid))
    session_uuid = chat_session_uuid(userid)
    intent = delete_intents.begin(engine, tenant, "user", userid, session_uuid=session_uuid, thread=thread)
    deleted: list[str] = []
    after: str | None = None
    done = 0
    while page := engine.store.list_thread_memories(tenant, thread, after, _PAGE):
        if pages is not None and done >= pages:
            return None  # left begun: a later sweep goes on
        index_purge.delete(engine, tenant, [memory.memory_id for memory in page])
        for memory in page:
            try:
                engine.store.delete_memory(tenant, memory.memory_id)
                deleted.append(memory.memory_id)
            except NotFound:
                continue  # deleted meanwhile
        after, done = page[-1].memory_id, done + 1
    # The session's memories (extracted since the listing) likewise: purged, then removed.
    ahead = [memory.memory_id for memory in engine.store.list_memories(tenant, session_uuid)]
    index_purge.delete(engine, tenant, ahead)
    removal = engine.store.delete_session(tenant, session_uuid)
    index_purge.delete(engine, tenant, [m for m in removal.deleted_memories if m not in ahead])
    # The thread is the user's alone: its character registry and statements record name them.
    engine.store.forget_thread_records(tenant, thread)
    engine.store.end_delete(intent)
    return RemovalOutcome(
        deleted_memories=deleted + removal.deleted_memories, deleted_dialogs=removal.deleted_dialogs
    )
