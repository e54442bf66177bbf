"""`Store` on one SQLite file: the local system of record for sessions, turns and memories.

The class is the port's face; each kind of record has its own module of SQL over the database:
`sqlite_turns` (sessions and turns), `sqlite_memories` (memories), `sqlite_removal` (deletes and
forks), `sqlite_deletes` (deletes in flight). The tenant's retention, the thread's character
registry and its statements record are one row each, kept here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from memory_engine.adapters.encoding import to_text
from memory_engine.adapters.local import sqlite_deletes as deletes
from memory_engine.adapters.local import sqlite_memories as memories
from memory_engine.adapters.local import sqlite_removal as removal
from memory_engine.adapters.local import sqlite_turns as turns
from memory_engine.adapters.local.sqlite_db import SqliteDatabase
from memory_engine.adapters.local.sqlite_rows import (
    STORE_SCHEMA,
    buffers,
    expired_ids,
    migrate_store,
    retention_days,
    save_retention,
)
from memory_engine.models.deletes import DeleteIntent
from memory_engine.models.domain import Memory, Session, Turn
from memory_engine.models.life import MemoryLife
from memory_engine.models.statements import ThreadStatements
from memory_engine.ports import Buffer, Clock, ConsolidateOutcome, FactScope, ForkPlan, RemovalOutcome
from memory_engine.ports.clock import SystemClock


class SqliteStore:
    """The `Store` port over stdlib sqlite3; safe to share between the server's threads.

    Nothing touches the disk until the first call; `path` may be ":memory:" for throwaway use.
    """

    def __init__(self, path: Path | str, clock: Clock | None = None) -> None:
        self._db = SqliteDatabase(path, STORE_SCHEMA, migrate=migrate_store)
        self._clock = clock or SystemClock()

    def _now(self) -> str:
        return to_text(self._clock.now())

    def close(self) -> None:
        self._db.close()

    # -- sessions and turns ------------------------------------------------------------------

    def get_session(self, tenant: str, session_uuid: str) -> Session | None:
        return turns.get_session(self._db, tenant, session_uuid)

    def list_sessions(
        self, tenant: str, after: tuple[str, str] | None = None, limit: int | None = None
    ) -> list[Session]:
        return turns.sessions_after(self._db, tenant, after, -1 if limit is None else limit)

    def sessions_after(self, tenant: str, after: tuple[str, str] | None, limit: int) -> list[Session]:
        return turns.sessions_after(self._db, tenant, after, max(limit, 0))

    def thread_has_sessions(self, tenant: str, thread: str) -> bool:
        return turns.thread_has_sessions(self._db, tenant, thread)

    def append_turn(self, session: Session, turn: Turn) -> ConsolidateOutcome:
        return turns.append_turn(self._db, session, turn)

    def list_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        return turns.list_turns(self._db, tenant, session_uuid)

    def get_turn(self, tenant: str, session_uuid: str, dialog_uuid: str) -> Turn | None:
        return turns.get_turn(self._db, tenant, session_uuid, dialog_uuid)

    def buffered_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        return turns.buffered_turns(self._db, tenant, session_uuid)

    def buffered_turns_in_threads(self, tenant: str, threads: Sequence[str]) -> list[Turn]:
        return turns.buffered_turns_in_threads(self._db, tenant, threads)

    def save_turn_vectors(self, tenant: str, session_uuid: str, vectors: Mapping[str, list[float]]) -> int:
        return turns.save_turn_vectors(self._db, tenant, session_uuid, vectors)

    def buffers(self) -> list[Buffer]:
        with self._db.read() as conn:
            return buffers(conn)

    # -- memories ----------------------------------------------------------------------------

    def save_memory(self, memory: Memory) -> bool:
        return memories.save_memory(self._db, memory)

    def get_memory(self, tenant: str, memory_id: str) -> Memory | None:
        return memories.get_memory(self._db, self._clock, tenant, memory_id)

    def get_memories(
        self, tenant: str, memory_ids: Sequence[str], *, vectors: bool = True, expired: bool = False
    ) -> dict[str, Memory]:
        now = None if expired else self._now()
        return memories.get_memories(self._db, now, tenant, memory_ids, vectors=vectors)

    def list_memories(self, tenant: str, session_uuid: str) -> list[Memory]:
        return memories.list_memories(self._db, self._now(), tenant, session_uuid)

    def iter_memories(self, tenant: str | None = None) -> Iterator[Memory]:
        return memories.iter_memories(self._db, self._clock, tenant)

    def list_thread_memories(
        self, tenant: str, thread: str, after: str | None = None, limit: int = 100
    ) -> list[Memory]:
        return memories.list_thread_memories(self._db, self._now(), tenant, thread, after, limit)

    def latest_thread_memories(self, tenant: str, thread: str, limit: int) -> list[Memory]:
        return memories.latest_thread_memories(self._db, self._now(), tenant, thread, limit)

    def update_memory(self, memory: Memory, *, expected_life: MemoryLife | None = None) -> bool:
        return memories.update_memory(self._db, memory, expected_life)

    def memories_after(self, tenant: str, after: str | None, limit: int) -> list[Memory]:
        return memories.memories_after(self._db, self._now(), tenant, after, limit)

    def expired_memories(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        with self._db.read() as conn:
            return expired_ids(conn, to_text(now), limit)

    def fact_scopes(self, tenant: str, after: str | None = None, limit: int = 100) -> list[FactScope]:
        return memories.fact_scopes(self._db, tenant, after, limit)

    # -- removal and fork ----------------------------------------------------------------------

    def delete_session(self, tenant: str, session_uuid: str) -> RemovalOutcome:
        return removal.delete_session(self._db, tenant, session_uuid)

    def delete_memory(self, tenant: str, memory_id: str) -> RemovalOutcome:
        return removal.delete_memory(self._db, tenant, memory_id)

    def delete_dialog(self, tenant: str, session_uuid: str, dialog_uuid: str) -> RemovalOutcome:
        return removal.delete_dialog(self._db, tenant, session_uuid, dialog_uuid)

    def create_fork(self, plan: ForkPlan) -> None:
        removal.create_fork(self._db, plan)

    # -- deletes in flight ---------------------------------------------------------------------

    def begin_delete(self, intent: DeleteIntent) -> None:
        deletes.begin(self._db, intent)

    def end_delete(self, intent: DeleteIntent) -> None:
        deletes.end(self._db, intent)

    def deletes_begun(self, before: datetime, limit: int) -> list[DeleteIntent]:
        return deletes.begun_before(self._db, before, limit)

    # -- a tenant's retention -----------------------------------------------------------------

    def get_retention(self, tenant: str) -> int | None:
        with self._db.read() as conn:
            return retention_days(conn, tenant)

    def set_retention(self, tenant: str, days: int | None) -> None:
        with self._db.write() as conn:
            save_retention(conn, tenant, days)

    # -- the thread's character registry ------------------------------------------------------

    def get_characters(self, tenant: str, thread: str) -> dict[str, list[str]]:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT registry FROM characters WHERE tenant = ? AND thread = ?", (tenant, thread)
            ).fetchone()
        return {} if row is None else dict(json.loads(row["registry"]))

    def save_characters(self, tenant: str, thread: str, registry: dict[str, list[str]]) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO characters (tenant, thread, registry) VALUES (?, ?, ?)"
                " ON CONFLICT (tenant, thread) DO UPDATE SET registry = excluded.registry",
                (tenant, thread, json.dumps(registry, ensure_ascii=False)),
            )

    def forget_thread_records(self, tenant: str, thread: str) -> None:
        with self._db.write() as conn:
            conn.execute("DELETE FROM characters WHERE tenant = ? AND thread = ?", (tenant, thread))
            conn.execute("DELETE FROM statements WHERE tenant = ? AND thread = ?", (tenant, thread))

    # -- the thread's statements record (supersession) ---------------------------------------

    def get_statements(self, tenant: str, thread: str) -> ThreadStatements | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT version, record FROM statements WHERE tenant = ? AND thread = ?", (tenant, thread)
            ).fetchone()
        if row is None:
            return None
        record = ThreadStatements.model_validate_json(row["record"])
        return record.model_copy(update={"version": row["version"]})

    def save_statements(self, record: ThreadStatements) -> bool:
        stored = record.model_dump_json(exclude={"version"})
        with self._db.write() as conn:
            if record.version == 0:
                cursor = conn.execute(
                    "INSERT INTO statements (tenant, thread, version, record) VALUES (?, ?, 1, ?)"
                    " ON CONFLICT (tenant, thread) DO NOTHING",
                    (record.tenant, record.thread, stored),
                )
            else:
                cursor = conn.execute(
                    "UPDATE statements SET version = version + 1, record = ?"
                    " WHERE tenant = ? AND thread = ? AND version = ?",
                    (stored, record.tenant, record.thread, record.version),
                )
            return cursor.rowcount == 1
