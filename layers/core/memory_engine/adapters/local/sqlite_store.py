"""`Store` on one SQLite file: the local system of record for sessions, turns and memories."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memory_engine.adapters.encoding import to_text
from memory_engine.adapters.local.sqlite_db import SqliteDatabase, pack_vector
from memory_engine.adapters.local.sqlite_rows import (
    MEMORY_COLUMNS_WITHOUT_VECTORS,
    STORE_SCHEMA,
    expired_ids,
    insert_memories,
    insert_session,
    insert_turns,
    memory_from_row,
    migrate_store,
    retention_days,
    save_retention,
    turn_from_row,
    update_memory_row,
)
from memory_engine.errors import Conflict, InvalidInput, NotFound
from memory_engine.models.domain import THREAD_SCOPE_KEY, Memory, Session, Turn, TurnStatus, check_thread
from memory_engine.ports import Clock, ConsolidateOutcome, FactScope, ForkPlan, RemovalOutcome
from memory_engine.ports.clock import SystemClock

_BUFFERED = TurnStatus.BUFFERED.value
_EXTRACTED = TurnStatus.EXTRACTED.value
_FORGOTTEN = TurnStatus.FORGOTTEN.value
# Memories come back in pages so a rebuild of the index streams without holding the lock throughout.
_ITER_PAGE = 200
_IN_CHUNK = 500  # ids per "IN (...)": well under SQLite's bound on host parameters
# What every read of memories adds: an expired memory is gone from the instant it expires.
_LIVE = " AND (expires_at IS NULL OR expires_at > ?)"


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
        with self._db.read() as conn:
            row = _session_row(conn, tenant, session_uuid)
        return None if row is None else Session.model_validate(dict(row))

    def list_sessions(
        self, tenant: str, after: tuple[str, str] | None = None, limit: int | None = None
    ) -> list[Session]:
        thread, session = after or ("", "")
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT * FROM sessions WHERE tenant = ? AND (parent_session_uuid, session_uuid) > (?, ?)"
                " ORDER BY parent_session_uuid, session_uuid LIMIT ?",
                (tenant, thread, session, -1 if limit is None else limit),
            ).fetchall()
        return [Session.model_validate(dict(row)) for row in rows]

    def fact_scopes(self, tenant: str, after: str | None = None, limit: int = 100) -> list[FactScope]:
        # Facts belong to no session (`facts.create`): the session index finds them without
        # reading the engine's memories, and each scope's first fact gives its scope.
        with self._db.read() as conn:
            counted = conn.execute(
                "SELECT parent_session_uuid AS thread, count(*) AS facts, min(memory_id) AS first"
                " FROM memories WHERE tenant = ? AND session_uuid = ''"
                " AND json_extract(metadata, '$.kind') = 'fact' AND parent_session_uuid > ?"
                " GROUP BY parent_session_uuid ORDER BY parent_session_uuid LIMIT ?",
                (tenant, after or "", limit),
            ).fetchall()
            scopes = {
                row["memory_id"]: json.loads(row["scope"])
                for row in conn.execute(
                    f"SELECT memory_id, scope FROM memories WHERE tenant = ? AND memory_id IN "
                    f"({','.join('?' * len(counted))})",
                    (tenant, *(row["first"] for row in counted)),
                )
            }
        return [
            FactScope(
                row["thread"], scopes.get(row["first"]) or {THREAD_SCOPE_KEY: row["thread"]}, row["facts"]
            )
            for row in counted
        ]

    def sessions_after(self, tenant: str, after: tuple[str, str] | None, limit: int) -> list[Session]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT * FROM sessions WHERE tenant = ? AND (parent_session_uuid, session_uuid) > (?, ?)"
                " ORDER BY parent_session_uuid, session_uuid LIMIT ?",
                (tenant, *(after or ("", "")), max(limit, 0)),
            ).fetchall()
        return [Session.model_validate(dict(row)) for row in rows]

    def append_turn(self, session: Session, turn: Turn) -> ConsolidateOutcome:
        if (turn.tenant, turn.session_uuid) != (session.tenant, session.session_uuid):
            raise InvalidInput(
                f"Turn {turn.dialog_uuid} names session {turn.session_uuid} of tenant {turn.tenant}, "
                f"but is appended to session {session.session_uuid} of tenant {session.tenant}."
            )
        tenant, session_uuid = session.tenant, session.session_uuid
        with self._db.write() as conn:
            row = _session_row(conn, tenant, session_uuid)
            if row is None:
                insert_session(conn, session)
                next_seq = session.next_seq
            else:
                check_thread(session_uuid, row["parent_session_uuid"], session.parent_session_uuid)
                next_seq = int(row["next_seq"])
            existing = _turn_row(conn, tenant, session_uuid, turn.dialog_uuid)
            if existing is not None and not turn_from_row(existing).same_content(turn):
                raise _dialog_reused(session_uuid, turn.dialog_uuid)
            if existing is None:
                fresh = {"seq": next_seq, "status": TurnStatus.BUFFERED, "memory_id": None}
                insert_turns(conn, [turn.model_copy(update=fresh)])
                conn.execute(
                    "UPDATE sessions SET next_seq = ? WHERE tenant = ? AND session_uuid = ?",
                    (next_seq + 1, tenant, session_uuid),
                )
            count = _buffered_count(conn, tenant, session_uuid)
            return ConsolidateOutcome(
                created=existing is None, buffered_count=count, session_created=row is None
            )

    def list_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        return self._turns(
            "SELECT * FROM turns WHERE tenant = ? AND session_uuid = ? ORDER BY seq", (tenant, session_uuid)
        )

    def buffered_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        return self._turns(
            "SELECT * FROM turns WHERE tenant = ? AND session_uuid = ? AND status = ? ORDER BY seq",
            (tenant, session_uuid, _BUFFERED),
        )

    def buffered_turns_in_threads(self, tenant: str, threads: Sequence[str]) -> list[Turn]:
        if not threads:
            return []
        # json_each binds any number of threads as one parameter (no host-parameter limit to mind).
        return self._turns(
            "SELECT t.* FROM turns AS t JOIN sessions AS s"
            " ON s.tenant = t.tenant AND s.session_uuid = t.session_uuid"
            " WHERE t.tenant = ? AND t.status = ?"
            " AND s.parent_session_uuid IN (SELECT value FROM json_each(?))"
            " ORDER BY t.session_uuid, t.seq",
            (tenant, _BUFFERED, json.dumps(list(threads))),
        )

    def save_turn_vectors(self, tenant: str, session_uuid: str, vectors: Mapping[str, list[float]]) -> int:
        with self._db.write() as conn:
            return sum(
                conn.execute(
                    "UPDATE turns SET embedding = ?"
                    " WHERE tenant = ? AND session_uuid = ? AND dialog_uuid = ?",
                    (pack_vector(vector), tenant, session_uuid, dialog_uuid),
                ).rowcount
                for dialog_uuid, vector in vectors.items()
            )

    def full_buffers(self, at_least: int) -> list[tuple[str, str]]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT tenant, session_uuid FROM turns WHERE status = ? GROUP BY tenant, session_uuid"
                " HAVING COUNT(*) >= ? ORDER BY tenant, session_uuid",
                (_BUFFERED, at_least),
            ).fetchall()
        return [(row["tenant"], row["session_uuid"]) for row in rows]

    # -- memories ----------------------------------------------------------------------------

    def save_memory(self, memory: Memory) -> bool:
        """Claim the memory's source turns and write it, or write nothing and return False.

        A memory without source dialogs claims nothing and is written as long as its id is new.
        """
        sources = json.dumps(sorted(set(memory.source_dialog_uuids)))
        with self._db.write() as conn:
            if _memory_row(conn, memory.tenant, memory.memory_id) is not None:
                return False
            claimable = conn.execute(
                "SELECT COUNT(*) FROM turns WHERE tenant = ? AND session_uuid = ? AND status = ?"
                " AND dialog_uuid IN (SELECT value FROM json_each(?))",
                (memory.tenant, memory.session_uuid, _BUFFERED, sources),
            ).fetchone()[0]
            if claimable != len(set(memory.source_dialog_uuids)):
                return False
            insert_memories(conn, [memory])
            conn.execute(
                "UPDATE turns SET status = ?, memory_id = ? WHERE tenant = ? AND session_uuid = ?"
                " AND dialog_uuid IN (SELECT value FROM json_each(?))",
                (_EXTRACTED, memory.memory_id, memory.tenant, memory.session_uuid, sources),
            )
            return True

    def get_memory(self, tenant: str, memory_id: str) -> Memory | None:
        with self._db.read() as conn:
            row = _memory_row(conn, tenant, memory_id)
        memory = None if row is None else memory_from_row(row)
        return None if memory is None or memory.expired(self._clock.now()) else memory

    def get_memories(
        self, tenant: str, memory_ids: Sequence[str], *, vectors: bool = True
    ) -> dict[str, Memory]:
        wanted = list(dict.fromkeys(memory_ids))
        found: dict[str, Memory] = {}
        columns = "*" if vectors else MEMORY_COLUMNS_WITHOUT_VECTORS
        now = self._now()
        with self._db.read() as conn:
            for start in range(0, len(wanted), _IN_CHUNK):
                chunk = wanted[start : start + _IN_CHUNK]
                marks = ", ".join("?" * len(chunk))  # placeholders only: the ids are bound
                rows = conn.execute(
                    f"SELECT {columns} FROM memories WHERE tenant = ? AND memory_id IN ({marks})" + _LIVE,
                    (tenant, *chunk, now),
                ).fetchall()
                found.update((memory.memory_id, memory) for memory in map(memory_from_row, rows))
        return found

    def list_memories(self, tenant: str, session_uuid: str) -> list[Memory]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT * FROM memories WHERE tenant = ? AND session_uuid = ?"
                + _LIVE
                + " ORDER BY first_seq, memory_id",
                (tenant, session_uuid, self._now()),
            ).fetchall()
        return [memory_from_row(row) for row in rows]

    def iter_memories(self, tenant: str | None = None) -> Iterator[Memory]:
        # Keyset pages: the lock is held per page only, so a long rebuild never stalls requests.
        after: tuple[str, str] = ("", "")
        while True:
            with self._db.read() as conn:
                rows = conn.execute(
                    "SELECT * FROM memories WHERE (tenant, memory_id) > (?, ?)"
                    " AND (? IS NULL OR tenant = ?) ORDER BY tenant, memory_id LIMIT ?",
                    (*after, tenant, tenant, _ITER_PAGE),
                ).fetchall()
            now = self._clock.now()
            yield from (memory for memory in map(memory_from_row, rows) if not memory.expired(now))
            if len(rows) < _ITER_PAGE:
                return
            after = (rows[-1]["tenant"], rows[-1]["memory_id"])

    def list_thread_memories(
        self, tenant: str, thread: str, after: str | None = None, limit: int = 100
    ) -> list[Memory]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT * FROM memories WHERE tenant = ? AND parent_session_uuid = ? AND memory_id > ?"
                + _LIVE
                + " ORDER BY memory_id LIMIT ?",
                (tenant, thread, after or "", self._now(), max(limit, 0)),
            ).fetchall()
        return [memory_from_row(row) for row in rows]

    def update_memory(self, memory: Memory) -> bool:
        with self._db.write() as conn:
            return update_memory_row(conn, memory)

    def memories_after(self, tenant: str, after: str | None, limit: int) -> list[Memory]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT * FROM memories WHERE tenant = ? AND memory_id > ?"
                + _LIVE
                + " ORDER BY memory_id LIMIT ?",
                (tenant, after or "", self._now(), max(limit, 0)),
            ).fetchall()
        return [memory_from_row(row) for row in rows]

    def expired_memories(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        with self._db.read() as conn:
            return expired_ids(conn, to_text(now), limit)

    # -- removal -----------------------------------------------------------------------------

    def delete_session(self, tenant: str, session_uuid: str) -> RemovalOutcome:
        if not session_uuid:
            return RemovalOutcome()  # "" is no session: it is what facts carry, and they stay
        with self._db.write() as conn:
            memories = conn.execute(
                "SELECT memory_id FROM memories WHERE tenant = ? AND session_uuid = ? ORDER BY memory_id",
                (tenant, session_uuid),
            ).fetchall()
            dialogs = conn.execute(
                "SELECT dialog_uuid FROM turns WHERE tenant = ? AND session_uuid = ? ORDER BY seq",
                (tenant, session_uuid),
            ).fetchall()
            for table in ("memories", "turns", "sessions"):
                conn.execute(
                    f"DELETE FROM {table} WHERE tenant = ? AND session_uuid = ?", (tenant, session_uuid)
                )
            return RemovalOutcome(
                deleted_memories=[row["memory_id"] for row in memories],
                deleted_dialogs=[row["dialog_uuid"] for row in dialogs],
            )

    def delete_memory(self, tenant: str, memory_id: str) -> RemovalOutcome:
        with self._db.write() as conn:
            row = _memory_row(conn, tenant, memory_id)
            if row is None:
                raise NotFound(
                    f"No memory {memory_id} for this tenant; it may be deleted already. "
                    "List the session's memories to find a current id."
                )
            session_uuid = row["session_uuid"]
            conn.execute("DELETE FROM memories WHERE tenant = ? AND memory_id = ?", (tenant, memory_id))
            # Forgotten, not deleted: the raw history stays, and it is never extracted again.
            conn.execute(
                "UPDATE turns SET status = ?, memory_id = NULL"
                " WHERE tenant = ? AND session_uuid = ? AND memory_id = ?",
                (_FORGOTTEN, tenant, session_uuid, memory_id),
            )
            return RemovalOutcome(
                deleted_memories=[memory_id], buffered_count=_buffered_count(conn, tenant, session_uuid)
            )

    def delete_dialog(self, tenant: str, session_uuid: str, dialog_uuid: str) -> RemovalOutcome:
        with self._db.write() as conn:
            if _session_row(conn, tenant, session_uuid) is None:
                raise NotFound(
                    f"No session {session_uuid} for this tenant; check session_uuid "
                    "(a session exists once its first turn was consolidated)."
                )
            row = _turn_row(conn, tenant, session_uuid, dialog_uuid)
            if row is None:
                raise NotFound(
                    f"Session {session_uuid} has no dialog {dialog_uuid}; it may be deleted already. "
                    "Send a dialog uuid of this session or a memory id."
                )
            conn.execute(
                "DELETE FROM turns WHERE tenant = ? AND session_uuid = ? AND dialog_uuid = ?",
                (tenant, session_uuid, dialog_uuid),
            )
            outcome = RemovalOutcome(deleted_dialogs=[dialog_uuid])
            memory_id = row["memory_id"]
            if row["status"] == _EXTRACTED and memory_id is not None:
                # The memory summarised the deleted words too: it goes, and its other turns are
                # extracted again so nothing else is lost.
                deleted = conn.execute(
                    "DELETE FROM memories WHERE tenant = ? AND memory_id = ?", (tenant, memory_id)
                ).rowcount
                outcome.deleted_memories.extend([memory_id] if deleted else [])
                siblings = conn.execute(
                    "SELECT dialog_uuid FROM turns WHERE tenant = ? AND session_uuid = ? AND memory_id = ?"
                    " ORDER BY seq",
                    (tenant, session_uuid, memory_id),
                ).fetchall()
                outcome.rebuffered_dialogs.extend(sibling["dialog_uuid"] for sibling in siblings)
                conn.execute(
                    "UPDATE turns SET status = ?, memory_id = NULL"
                    " WHERE tenant = ? AND session_uuid = ? AND memory_id = ?",
                    (_BUFFERED, tenant, session_uuid, memory_id),
                )
            outcome.deleted_session = _drop_if_empty(conn, tenant, session_uuid)
            outcome.buffered_count = _buffered_count(conn, tenant, session_uuid)
            return outcome

    # -- fork --------------------------------------------------------------------------------

    def create_fork(self, plan: ForkPlan) -> None:
        plan.check_one_session()
        target = plan.target
        with self._db.write() as conn:
            if _session_row(conn, target.tenant, target.session_uuid) is not None:
                raise Conflict(
                    f"Session {target.session_uuid} already exists; fork into a new target_session_uuid.",
                    [{"field": "target_session_uuid", "message": "already exists"}],
                )
            next_seq = max((turn.seq for turn in plan.turns), default=-1) + 1
            try:
                insert_session(conn, target.model_copy(update={"next_seq": next_seq}))
                insert_turns(conn, plan.turns)
                insert_memories(conn, plan.memories)
            except sqlite3.IntegrityError as error:
                raise Conflict(
                    f"Fork into {target.session_uuid} clashes with stored data or repeats itself ({error}); "
                    "nothing was written."
                ) from error

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

    def _turns(self, sql: str, params: tuple[Any, ...]) -> list[Turn]:
        with self._db.read() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [turn_from_row(row) for row in rows]


def _dialog_reused(session_uuid: str, dialog_uuid: str) -> Conflict:
    return Conflict(
        f"new_dialog.uuid {dialog_uuid} was already used in session {session_uuid} for other content. "
        "Give every new turn its own uuid; a retry must resend the same query, answer, user_name and npc_id.",
        [{"field": "new_dialog.uuid", "message": "already used for other content"}],
    )


def _session_row(conn: sqlite3.Connection, tenant: str, session_uuid: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM sessions WHERE tenant = ? AND session_uuid = ?", (tenant, session_uuid)
    ).fetchone()
    return row


def _turn_row(
    conn: sqlite3.Connection, tenant: str, session_uuid: str, dialog_uuid: str
) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM turns WHERE tenant = ? AND session_uuid = ? AND dialog_uuid = ?",
        (tenant, session_uuid, dialog_uuid),
    ).fetchone()
    return row


def _memory_row(conn: sqlite3.Connection, tenant: str, memory_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM memories WHERE tenant = ? AND memory_id = ?", (tenant, memory_id)
    ).fetchone()
    return row


def _drop_if_empty(conn: sqlite3.Connection, tenant: str, session_uuid: str) -> bool:
    """Delete the session when it holds no turn and no memory any more (its last turn deleted):
    no empty session is left listed. Inside the caller's write, so no append interleaves."""
    for table in ("turns", "memories"):
        held = conn.execute(
            f"SELECT 1 FROM {table} WHERE tenant = ? AND session_uuid = ? LIMIT 1",
            (tenant, session_uuid),
        ).fetchone()
        if held is not None:
            return False
    conn.execute("DELETE FROM sessions WHERE tenant = ? AND session_uuid = ?", (tenant, session_uuid))
    return True


def _buffered_count(conn: sqlite3.Connection, tenant: str, session_uuid: str) -> int:
    return int(
        conn.execute(
            "SELECT COUNT(*) FROM turns WHERE tenant = ? AND session_uuid = ? AND status = ?",
            (tenant, session_uuid, _BUFFERED),
        ).fetchone()[0]
    )
