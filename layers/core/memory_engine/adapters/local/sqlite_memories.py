"""Memories in the local store: the claiming write, updates, and every read (expired ones left out)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence

from memory_engine.adapters.local.sqlite_db import SqliteDatabase
from memory_engine.adapters.local.sqlite_rows import (
    MEMORY_COLUMNS_WITHOUT_VECTORS,
    insert_memories,
    memory_from_row,
    update_memory_row,
)
from memory_engine.adapters.local.sqlite_turns import BUFFERED
from memory_engine.models.domain import THREAD_SCOPE_KEY, Memory, TurnStatus
from memory_engine.models.life import MemoryLife
from memory_engine.ports import Clock, FactScope

EXTRACTED = TurnStatus.EXTRACTED.value
# Memories come back in pages so a rebuild of the index streams without holding the lock throughout.
_ITER_PAGE = 200
_IN_CHUNK = 500  # ids per "IN (...)": well under SQLite's bound on host parameters
# What every read of memories adds: an expired memory is gone from the instant it expires.
_LIVE = " AND (expires_at IS NULL OR expires_at > ?)"


def save_memory(db: SqliteDatabase, memory: Memory) -> bool:
    """Claim the memory's source turns and write it, or write nothing and return False.

    A memory without source dialogs claims nothing and is written as long as its id is new.
    """
    sources = json.dumps(sorted(set(memory.source_dialog_uuids)))
    with db.write() as conn:
        if memory_row(conn, memory.tenant, memory.memory_id) is not None:
            return False
        claimable = conn.execute(
            "SELECT COUNT(*) FROM turns WHERE tenant = ? AND session_uuid = ? AND status = ?"
            " AND dialog_uuid IN (SELECT value FROM json_each(?))",
            (memory.tenant, memory.session_uuid, BUFFERED, sources),
        ).fetchone()[0]
        if claimable != len(set(memory.source_dialog_uuids)):
            return False
        insert_memories(conn, [memory])
        conn.execute(
            "UPDATE turns SET status = ?, memory_id = ? WHERE tenant = ? AND session_uuid = ?"
            " AND dialog_uuid IN (SELECT value FROM json_each(?))",
            (EXTRACTED, memory.memory_id, memory.tenant, memory.session_uuid, sources),
        )
        return True


def update_memory(db: SqliteDatabase, memory: Memory, expected_life: MemoryLife | None) -> bool:
    """`Store.update_memory`: the life compared and the row replaced under the one write lock."""
    with db.write() as conn:
        if expected_life is not None:
            row = conn.execute(
                "SELECT life FROM memories WHERE tenant = ? AND memory_id = ?",
                (memory.tenant, memory.memory_id),
            ).fetchone()
            if row is None or MemoryLife.model_validate_json(row["life"]) != expected_life:
                return False
        return update_memory_row(conn, memory)


def get_memory(db: SqliteDatabase, clock: Clock, tenant: str, memory_id: str) -> Memory | None:
    with db.read() as conn:
        row = memory_row(conn, tenant, memory_id)
    memory = None if row is None else memory_from_row(row)
    return None if memory is None or memory.expired(clock.now()) else memory


def get_memories(
    db: SqliteDatabase, now: str | None, tenant: str, memory_ids: Sequence[str], *, vectors: bool = True
) -> dict[str, Memory]:
    """`now` None: expired memories too (`Store.get_memories(expired=True)`)."""
    wanted = list(dict.fromkeys(memory_ids))
    live, live_args = ("", ()) if now is None else (_LIVE, (now,))
    found: dict[str, Memory] = {}
    columns = "*" if vectors else MEMORY_COLUMNS_WITHOUT_VECTORS
    with db.read() as conn:
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start : start + _IN_CHUNK]
            marks = ", ".join("?" * len(chunk))  # placeholders only: the ids are bound
            rows = conn.execute(
                f"SELECT {columns} FROM memories WHERE tenant = ? AND memory_id IN ({marks})" + live,
                (tenant, *chunk, *live_args),
            ).fetchall()
            found.update((memory.memory_id, memory) for memory in map(memory_from_row, rows))
    return found


def list_memories(db: SqliteDatabase, now: str, tenant: str, session_uuid: str) -> list[Memory]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT * FROM memories WHERE tenant = ? AND session_uuid = ?"
            + _LIVE
            + " ORDER BY first_seq, memory_id",
            (tenant, session_uuid, now),
        ).fetchall()
    return [memory_from_row(row) for row in rows]


def iter_memories(db: SqliteDatabase, clock: Clock, tenant: str | None = None) -> Iterator[Memory]:
    # Keyset pages: the lock is held per page only, so a long rebuild never stalls requests.
    after: tuple[str, str] = ("", "")
    while True:
        with db.read() as conn:
            rows = conn.execute(
                "SELECT * FROM memories WHERE (tenant, memory_id) > (?, ?)"
                " AND (? IS NULL OR tenant = ?) ORDER BY tenant, memory_id LIMIT ?",
                (*after, tenant, tenant, _ITER_PAGE),
            ).fetchall()
        now = clock.now()
        yield from (memory for memory in map(memory_from_row, rows) if not memory.expired(now))
        if len(rows) < _ITER_PAGE:
            return
        after = (rows[-1]["tenant"], rows[-1]["memory_id"])


def list_thread_memories(
    db: SqliteDatabase, now: str, tenant: str, thread: str, after: str | None, limit: int
) -> list[Memory]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT * FROM memories WHERE tenant = ? AND parent_session_uuid = ? AND memory_id > ?"
            + _LIVE
            + " ORDER BY memory_id LIMIT ?",
            (tenant, thread, after or "", now, max(limit, 0)),
        ).fetchall()
    return [memory_from_row(row) for row in rows]


def latest_thread_memories(
    db: SqliteDatabase, now: str, tenant: str, thread: str, limit: int
) -> list[Memory]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT * FROM memories WHERE tenant = ? AND parent_session_uuid = ?"
            + _LIVE
            + " ORDER BY memory_id DESC LIMIT ?",
            (tenant, thread, now, max(limit, 0)),
        ).fetchall()
    return [memory_from_row(row) for row in rows]


def memories_after(db: SqliteDatabase, now: str, tenant: str, after: str | None, limit: int) -> list[Memory]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT * FROM memories WHERE tenant = ? AND memory_id > ?"
            + _LIVE
            + " ORDER BY memory_id LIMIT ?",
            (tenant, after or "", now, max(limit, 0)),
        ).fetchall()
    return [memory_from_row(row) for row in rows]


def fact_scopes(db: SqliteDatabase, tenant: str, after: str | None, limit: int) -> list[FactScope]:
    # One row a scope, kept by triggers as facts come and go (`sqlite_rows._FACT_COUNTS`).
    with db.read() as conn:
        counted = conn.execute(
            "SELECT thread, facts, scope FROM fact_scopes WHERE tenant = ? AND thread > ?"
            " ORDER BY thread LIMIT ?",
            (tenant, after or "", limit),
        ).fetchall()
    return [
        FactScope(row["thread"], json.loads(row["scope"]) or {THREAD_SCOPE_KEY: row["thread"]}, row["facts"])
        for row in counted
    ]


def memory_row(conn: sqlite3.Connection, tenant: str, memory_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM memories WHERE tenant = ? AND memory_id = ?", (tenant, memory_id)
    ).fetchone()
    return row
