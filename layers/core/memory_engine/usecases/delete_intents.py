"""Deletes in flight (`models/deletes.py`): a delete records itself before its first change and
removes the record after its last, so that one a process left half-done can be finished
(`unfinished_deletes`, from the sweep).

A delete writes in steps: the facts its memory replaced reopened, the store's removal, the
thread's statements record, the index purge (`usecases/delete.py`, `usecases/bank.py`). A
process that dies between two of them leaves the rest undone: the caller's retry finishes it
(each step run again changes nothing), and when no retry comes, the sweep does.

Forgetting a chat user (`forget_user.forget`) records itself the same way, and so does the
sweep's own removal of expired memories (their expiry or their tenant's retention, and the raw
turns the retention removes after them: `begin_expiry`, finished from its record by
`sweep.expire_recorded`).
"""

from __future__ import annotations

from collections.abc import Mapping
from uuid import uuid4

from memory_engine.engine import Engine
from memory_engine.models.deletes import DeleteIntent, DeleteRoute
from memory_engine.models.domain import Memory


def begin(
    engine: Engine,
    tenant: str,
    route: DeleteRoute,
    target: str,
    *,
    session_uuid: str = "",
    memory: Memory | None = None,
    thread: str = "",
) -> DeleteIntent:
    """Record the delete before its first change (one write); returns the record, to end it.
    `memory`: the memory it removes, as read (its thread's, then); `thread`: the thread of a
    delete that removes none (a buffered turn's)."""
    intent = DeleteIntent(
        tenant=tenant,
        route=route,
        session_uuid=session_uuid,
        target=target,
        thread=thread if memory is None else memory.parent_session_uuid,
        memory_ids=[] if memory is None else [memory.memory_id],
        begun=engine.clock.now(),
    )
    engine.store.begin_delete(intent)
    return intent


def begin_expiry(
    engine: Engine, tenant: str, memory_ids: list[str], read: Mapping[str, Memory]
) -> DeleteIntent:
    """Record the sweep's removal of the tenant's expired memories `memory_ids` (`read`: those of
    them still stored) before its first change: their sessions and the turns they were made of,
    what finishing it from the record needs once they went (`sweep.expire_recorded`). Its target
    is a token of this run: two runs never share a record."""
    sessions = {m.memory_id: m.session_uuid for m in read.values() if m.session_uuid}
    dialogs: dict[str, list[str]] = {}
    for memory in read.values():
        if memory.session_uuid:
            dialogs.setdefault(memory.session_uuid, []).extend(memory.source_dialog_uuids)
    intent = DeleteIntent(
        tenant=tenant,
        route="expiry",
        target=uuid4().hex,
        memory_ids=memory_ids,
        sessions=sessions,
        dialogs=dialogs,
        begun=engine.clock.now(),
    )
    engine.store.begin_delete(intent)
    return intent
