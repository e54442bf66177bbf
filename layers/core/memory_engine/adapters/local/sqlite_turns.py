"""Sessions and their turns in the local store: append (the consolidate write), the buffer, listings."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from memory_engine.adapters.local.sqlite_db import SqliteDatabase, pack_vector
from memory_engine.adapters.local.sqlite_rows import insert_session, insert_turns, turn_from_row
from memory_engine.errors import Conflict, InvalidInput
from memory_engine.models.domain import Session, Turn, TurnStatus, check_thread
from memory_engine.ports import ConsolidateOutcome

BUFFERED = TurnStatus.BUFFERED.value


def get_session(db: SqliteDatabase, tenant: str, session_uuid: str) -> Session | None:
    with db.read() as conn:
        row = session_row(conn, tenant, session_uuid)
    return None if row is None else Session.model_validate(dict(row))


def sessions_after(
    db: SqliteDatabase, tenant: str, after: tuple[str, str] | None, limit: int
) -> list[Session]:
    """A tenant's sessions in (thread, session) order after `after`; SQLite's LIMIT (-1: all)."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT * FROM sessions WHERE tenant = ? AND (parent_session_uuid, session_uuid) > (?, ?)"
            " ORDER BY parent_session_uuid, session_uuid LIMIT ?",
            (tenant, *(after or ("", "")), limit),
        ).fetchall()
    return [Session.model_validate(dict(row)) for row in rows]


def append_turn(db: SqliteDatabase, session: Session, turn: Turn) -> ConsolidateOutcome:
    if (turn.tenant, turn.session_uuid) != (session.tenant, session.session_uuid):
        raise InvalidInput(
            f"Turn {turn.dialog_uuid} names session {turn.session_uuid} of tenant {turn.tenant}, "
            f"but is appended to session {session.session_uuid} of tenant {session.tenant}."
        )
    tenant, session_uuid = session.tenant, session.session_uuid
    with db.write() as conn:
        row = session_row(conn, tenant, session_uuid)
        if row is None:
            insert_session(conn, session)
            next_seq = session.next_seq
        else:
            check_thread(session_uuid, row["parent_session_uuid"], session.parent_session_uuid)
            next_seq = int(row["next_seq"])
        existing = turn_row(conn, tenant, session_uuid, turn.dialog_uuid)
        if existing is not None and not turn_from_row(existing).same_content(turn):
            raise _dialog_reused(session_uuid, turn.dialog_uuid)
        if existing is None:
            fresh = {"seq": next_seq, "status": TurnStatus.BUFFERED, "memory_id": None}
            insert_turns(conn, [turn.model_copy(update=fresh)])
            conn.execute(
                "UPDATE sessions SET next_seq = ? WHERE tenant = ? AND session_uuid = ?",
                (next_seq + 1, tenant, session_uuid),
            )
        count = buffered_count(conn, tenant, session_uuid)
        return ConsolidateOutcome(created=existing is None, buffered_count=count, session_created=row is None)


def list_turns(db: SqliteDatabase, tenant: str, session_uuid: str) -> list[Turn]:
    return _turns(
        db, "SELECT * FROM turns WHERE tenant = ? AND session_uuid = ? ORDER BY seq", (tenant, session_uuid)
    )


def get_turn(db: SqliteDatabase, tenant: str, session_uuid: str, dialog_uuid: str) -> Turn | None:
    with db.read() as conn:
        row = turn_row(conn, tenant, session_uuid, dialog_uuid)
    return None if row is None else turn_from_row(row)


def buffered_turns(db: SqliteDatabase, tenant: str, session_uuid: str) -> list[Turn]:
    return _turns(
        db,
        "SELECT * FROM turns WHERE tenant = ? AND session_uuid = ? AND status = ? ORDER BY seq",
        (tenant, session_uuid, BUFFERED),
    )


def buffered_turns_in_threads(db: SqliteDatabase, tenant: str, threads: Sequence[str]) -> list[Turn]:
    if not threads:
        return []
    # json_each binds any number of threads as one parameter (no host-parameter limit to mind).
    return _turns(
        db,
        "SELECT t.* FROM turns AS t JOIN sessions AS s"
        " ON s.tenant = t.tenant AND s.session_uuid = t.session_uuid"
        " WHERE t.tenant = ? AND t.status = ?"
        " AND s.parent_session_uuid IN (SELECT value FROM json_each(?))"
        " ORDER BY t.session_uuid, t.seq",
        (tenant, BUFFERED, json.dumps(list(threads))),
    )


def save_turn_vectors(
    db: SqliteDatabase, tenant: str, session_uuid: str, vectors: Mapping[str, list[float]]
) -> int:
    with db.write() as conn:
        return sum(
            conn.execute(
                "UPDATE turns SET embedding = ? WHERE tenant = ? AND session_uuid = ? AND dialog_uuid = ?",
                (pack_vector(vector), tenant, session_uuid, dialog_uuid),
            ).rowcount
            for dialog_uuid, vector in vectors.items()
        )


def thread_has_sessions(db: SqliteDatabase, tenant: str, thread: str) -> bool:
    with db.read() as conn:
        held = conn.execute(
            "SELECT 1 FROM sessions WHERE tenant = ? AND parent_session_uuid = ? LIMIT 1", (tenant, thread)
        ).fetchone()
    return held is not None


def session_row(conn: sqlite3.Connection, tenant: str, session_uuid: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM sessions WHERE tenant = ? AND session_uuid = ?", (tenant, session_uuid)
    ).fetchone()
    return row


def turn_row(
    conn: sqlite3.Connection, tenant: str, session_uuid: str, dialog_uuid: str
) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM turns WHERE tenant = ? AND session_uuid = ? AND dialog_uuid = ?",
        (tenant, session_uuid, dialog_uuid),
    ).fetchone()
    return row


def buffered_count(conn: sqlite3.Connection, tenant: str, session_uuid: str) -> int:
    return int(
        conn.execute(
            "SELECT COUNT(*) FROM turns WHERE tenant = ? AND session_uuid = ? AND status = ?",
            (tenant, session_uuid, BUFFERED),
        ).fetchone()[0]
    )


def _turns(db: SqliteDatabase, sql: str, params: tuple[Any, ...]) -> list[Turn]:
    with db.read() as conn:
        rows = conn.execute(sql, params).fetchall()
    return [turn_from_row(row) for row in rows]


def _dialog_reused(session_uuid: str, dialog_uuid: str) -> Conflict:
    return Conflict(
        f"new_dialog.uuid {dialog_uuid} was already used in session {session_uuid} for other content. "
        "Give every new turn its own uuid; a retry must resend the same query, answer, user_name and npc_id.",
        [{"field": "new_dialog.uuid", "message": "already used for other content"}],
    )
