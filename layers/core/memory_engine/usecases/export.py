"""Export a tenant's data (or one thread's, or one scope's facts) in pages of bounded work: the
records of docs/export.md, read through the store's keyset pages.

A page reads at most `SESSIONS_PER_PAGE` sessions (each with its turns, its memories and, at a
thread's first session, the thread's character registry) or `MEMORIES_PER_PAGE` memories (the
facts and other memories without a session: the memory bank's and chat memory's), then says where
the next page starts. The CLI's `memory-engine export` and `GET /v1/export` walk the same pages.
"""

from __future__ import annotations

from collections.abc import Iterator

from memory_engine.models.domain import Memory, Session
from memory_engine.models.export import (
    Cursor,
    ExportPage,
    ExportRecord,
    Selection,
    characters_record,
    memory_record,
    session_record,
    turn_record,
)
from memory_engine.ports import Store

SESSIONS_PER_PAGE = 20
MEMORIES_PER_PAGE = 200


def page(store: Store, tenant: str, selection: Selection, cursor: Cursor | None = None) -> ExportPage:
    """One page of the export from `cursor` (None: the first)."""
    at = cursor or Cursor()
    if at.stage == "sessions" and selection.scope is None:
        return _sessions_page(store, tenant, selection, at)
    return _memories_page(store, tenant, selection, at)


def walk(store: Store, tenant: str, selection: Selection) -> Iterator[ExportRecord]:
    """Every record of the export, page after page."""
    cursor: Cursor | None = Cursor()
    while cursor is not None:
        found = page(store, tenant, selection, cursor)
        yield from found.records
        cursor = Cursor.decode(found.next_cursor) if found.next_cursor else None


def _sessions_page(store: Store, tenant: str, selection: Selection, at: Cursor) -> ExportPage:
    sessions = store.sessions_after(tenant, at.after_session, SESSIONS_PER_PAGE)
    records: list[ExportRecord] = []
    previous_thread = at.after_session[0] if at.after_session else None
    for session in sessions:
        if selection.thread is None or session.parent_session_uuid == selection.thread:
            records += _session_records(
                store, session, first_of_thread=session.parent_session_uuid != previous_thread
            )
        previous_thread = session.parent_session_uuid
    if len(sessions) < SESSIONS_PER_PAGE:
        following = Cursor(stage="memories")
    else:
        last = sessions[-1]
        following = Cursor(stage="sessions", after_session=(last.parent_session_uuid, last.session_uuid))
    return ExportPage(records=records, next_cursor=following.encode())


def _session_records(store: Store, session: Session, first_of_thread: bool) -> list[ExportRecord]:
    tenant = session.tenant
    records: list[ExportRecord] = []
    if first_of_thread:
        registry = store.get_characters(tenant, session.parent_session_uuid)
        if registry:
            records.append(characters_record(session.parent_session_uuid, registry))
    records.append(session_record(session))
    records += [turn_record(turn) for turn in store.list_turns(tenant, session.session_uuid)]
    records += [memory_record(memory) for memory in store.list_memories(tenant, session.session_uuid)]
    return records


def _memories_page(store: Store, tenant: str, selection: Selection, at: Cursor) -> ExportPage:
    """Memories without a session (exported here, once): a thread's by its keyset pages, the
    tenant's or a scope's by the tenant's."""
    if selection.thread is not None:
        memories = store.list_thread_memories(tenant, selection.thread, at.after_memory, MEMORIES_PER_PAGE)
    else:
        memories = store.memories_after(tenant, at.after_memory, MEMORIES_PER_PAGE)
    records = [memory_record(memory) for memory in memories if _selected(memory, selection)]
    if len(memories) < MEMORIES_PER_PAGE:
        return ExportPage(records=records, next_cursor=None)
    following = Cursor(stage="memories", after_memory=memories[-1].memory_id)
    return ExportPage(records=records, next_cursor=following.encode())


def _selected(memory: Memory, selection: Selection) -> bool:
    if memory.session_uuid:
        return False  # exported with its session
    if selection.scope is None:
        return True
    scope = memory.visible_scope
    return all(scope.get(key) == value for key, value in selection.scope.items())
