"""Deletes in flight on SQLite (`Store.begin_delete`, `end_delete`, `deletes_begun`): one row
each in `deletes_begun`, keyed as the delete is (`DeleteIntent.key`), listed by when it began."""

from __future__ import annotations

from datetime import datetime

from memory_engine.adapters.encoding import to_text
from memory_engine.adapters.local.sqlite_db import SqliteDatabase
from memory_engine.models.deletes import DeleteIntent


def begin(db: SqliteDatabase, intent: DeleteIntent) -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO deletes_begun (tenant, route, session_uuid, target, begun, intent)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, route, session_uuid, target)"
            " DO UPDATE SET begun = excluded.begun, intent = excluded.intent",
            (*intent.key, to_text(intent.begun), intent.model_dump_json()),
        )


def end(db: SqliteDatabase, intent: DeleteIntent) -> None:
    with db.write() as conn:
        conn.execute(
            "DELETE FROM deletes_begun WHERE tenant = ? AND route = ? AND session_uuid = ? AND target = ?",
            intent.key,
        )


def begun_before(db: SqliteDatabase, before: datetime, limit: int) -> list[DeleteIntent]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT intent FROM deletes_begun WHERE begun <= ?"
            " ORDER BY begun, tenant, route, session_uuid, target LIMIT ?",
            (to_text(before), max(limit, 0)),
        ).fetchall()
    return [DeleteIntent.model_validate_json(row["intent"]) for row in rows]
