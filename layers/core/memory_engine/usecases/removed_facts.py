"""A deleted memory no longer replaces anything: the facts it had replaced are reopened.

A memory goes by id (`usecases.delete`, `usecases.bank.delete`), with a turn it was made of
(a dialog delete, its other turns re-buffered), or when it expires (the sweep, a tenant's
retention). Its key facts' statements then leave the thread's statements record, and each key
fact one of them had replaced is replaced by the next statement of its slot and character still
there, or holds again when none follows (`fact_reopening.reopen`, as a correction that moves a
statement does). A key fact the LLM extractor named as replaced by it holds again too
(`fact_reopening.unname`), from the memory as read before it went: by the delete by id and the memory
bank's delete, and, for a dialog's delete and the sweep's expiry, by the store's removal itself
(`RemovalOutcome.removed`).

Order: the reopening first (`forget_ahead`, while the memory and a turn naming it are still
there: the session's last turn takes the session, and with it what would lead a retry to the
thread), then the removal, then the record's update (`forget`, reopening again whatever a worker
marked meanwhile). Each write is a compare-and-set (a memory's life, the record's version) and
run again changes nothing, so a retry after a failure between them finishes the work: before the
removal it finds the memory; after it, a delete by id does it before answering 404, and so does
a dialog delete retried after its turn went (`forget_unstored`). Every delete is recorded before
its first change (`delete_intents`), so one never retried is finished by the sweep.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memory_engine.engine import Engine
from memory_engine.models.domain import Memory


def forget(
    engine: Engine, tenant: str, thread: str, memory_ids: Iterable[str], removed: Sequence[Memory] = ()
) -> list[Memory]:
    """After the memories `memory_ids` of `thread` were deleted (`removed`: those read before,
    for what their extractor named): reopen what they replaced and take their statements out of
    the thread's record. Returns the memories changed. One read of the record when they stated
    no one-value fact; nothing at all without a thread or a memory."""
    # Here, not at import: a handler that never deletes loads no reopening.
    from memory_engine.usecases import fact_reopening

    return fact_reopening.forget(engine, tenant, thread, list(memory_ids), removed)


def forget_ahead(engine: Engine, memory: Memory) -> list[Memory]:
    """A delete's reopening, before its removal: what `memory` replaced is reopened while it is
    still stored (`fact_reopening.ahead_of_removal`), and while a turn of it still points at it. A
    removal that takes the session's last turn takes the session with it, and with it the only
    way from the request to the thread: a retry after it would find nothing left to reopen, so it
    is reopened before; `forget`, after the removal, takes its statements out of the record. One
    read of the thread's record (none for a memory without key facts)."""
    from memory_engine.usecases import fact_reopening

    return fact_reopening.ahead_of_removal(engine, memory)


def unname_ahead(engine: Engine, memories: Sequence[Memory]) -> list[Memory]:
    """The sweep's expiry, before its removals: each key fact the extractor of one of `memories`
    named as replaced by it holds again (`fact_reopening.unname`), while the memory is still read:
    a run that dies after a removal is finished from its record, which holds no memory's contents.
    Nothing is read for a memory whose extractor named none."""
    from memory_engine.usecases import fact_reopening

    return [
        changed
        for memory in memories
        if memory.metadata.get("replaces_json")
        for changed in fact_reopening.unname(engine, memory)
    ]


def forget_unstored(engine: Engine, tenant: str, session_uuid: str) -> list[Memory]:
    """A retried dialog delete's repair: its turn went with the first try, and with it the only
    pointer to the memory removed in cascade, so the memories the thread's record lists that are
    no longer stored are forgotten instead (one read of the session, one of the record, and one
    batch read of the recorded memories without their vectors; nothing when nothing is missing).
    The thread is the session's: a session removed with its last turn leaves none to repair."""
    session = engine.store.get_session(tenant, session_uuid) if session_uuid else None
    if session is None or not session.parent_session_uuid:
        return []
    thread = session.parent_session_uuid
    record = engine.store.get_statements(tenant, thread)
    recorded = [] if record is None else list(dict.fromkeys(s.memory_id for s in record.statements))
    if not recorded:
        return []
    stored = engine.store.get_memories(tenant, recorded, vectors=False)
    gone = [memory_id for memory_id in recorded if memory_id not in stored]
    return forget(engine, tenant, thread, gone) if gone else []


def forget_in_sessions(
    engine: Engine, tenant: str, by_session: dict[str, list[str]], removed: Sequence[Memory] = ()
) -> list[Memory]:
    """The same for memories removed by id alone (the sweep's expired ones, a retried delete's),
    by the session they belonged to: each session's thread is read from it (one read per
    session). `removed`: those of them the store's removal read, for what their extractor named."""
    threads: dict[str, list[str]] = {}
    for session_uuid, memory_ids in by_session.items():
        session = engine.store.get_session(tenant, session_uuid) if session_uuid else None
        if session is not None and session.parent_session_uuid:
            threads.setdefault(session.parent_session_uuid, []).extend(memory_ids)
    return [
        changed
        for thread, ids in threads.items()
        for changed in forget(
            engine, tenant, thread, ids, [m for m in removed if m.parent_session_uuid == thread]
        )
    ]
