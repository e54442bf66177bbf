"""Deletes in the local store (a session, a memory, a dialog, with their cascades) and the fork write."""

from __future__ import annotations

import sqlite3

from memory_engine.adapters.local.sqlite_db import SqliteDatabase
from memory_engine.adapters.local.sqlite_memories import EXTRACTED, memory_row
from memory_engine.adapters.local.sqlite_rows import (
    insert_memories,
    insert_session,
    insert_turns,
    memory_from_row,
)
from memory_engine.adapters.local.sqlite_turns import BUFFERED, buffered_count, session_row, turn_row
from memory_engine.errors import Conflict, NotFound
from memory_engine.models.domain import TurnStatus
from memory_engine.ports import ForkPlan, RemovalOutcome

_FORGOTTEN = TurnStatus.FORGOTTEN.value


def delete_session(db: SqliteDatabase, tenant: str, session_uuid: str) -> RemovalOutcome:
    if not session_uuid:
        return RemovalOutcome()  # "" is no session: it is what facts carry, and they stay
    with db.write() as conn:
        memories = conn.execute(
            "SELECT memory_id FROM memories WHERE tenant = ? AND session_uuid = ? ORDER BY memory_id",
            (tenant, session_uuid),
        ).fetchall()
        dialogs = conn.execute(
            "SELECT dialog_uuid FROM turns WHERE tenant = ? AND session_uuid = ? ORDER BY seq",
            (tenant, session_uuid),
        ).fetchall()
        for table in ("memories", "turns", "sessions"):
            conn.execute(f"DELETE FROM {table} WHERE tenant = ? AND session_uuid = ?", (tenant, session_uuid))
        return RemovalOutcome(
            deleted_memories=[row["memory_id"] for row in memories],
            deleted_dialogs=[row["dialog_uuid"] for row in dialogs],
        )


def delete_memory(db: SqliteDatabase, tenant: str, memory_id: str) -> RemovalOutcome:
    with db.write() as conn:
        row = memory_row(conn, tenant, memory_id)
        if row is None:
            raise NotFound(
                f"No memory {memory_id} for this tenant; it may be deleted already. "
                "List the session's memories to find a current id."
            )
        session_uuid = row["session_uuid"]
        forgotten = [
            found["dialog_uuid"]
            for found in conn.execute(
                "SELECT dialog_uuid FROM turns WHERE tenant = ? AND session_uuid = ? AND memory_id = ?",
                (tenant, session_uuid, memory_id),
            )
        ]
        conn.execute("DELETE FROM memories WHERE tenant = ? AND memory_id = ?", (tenant, memory_id))
        # Forgotten, not deleted: the raw history stays, and it is never extracted again.
        conn.execute(
            "UPDATE turns SET status = ?, memory_id = NULL"
            " WHERE tenant = ? AND session_uuid = ? AND memory_id = ?",
            (_FORGOTTEN, tenant, session_uuid, memory_id),
        )
        return RemovalOutcome(
            deleted_memories=[memory_id],
            buffered_count=buffered_count(conn, tenant, session_uuid),
            session_uuid=session_uuid,
            forgotten_dialogs=forgotten,
            removed=[memory_from_row(row)],
        )


def delete_dialog(db: SqliteDatabase, tenant: str, session_uuid: str, dialog_uuid: str) -> RemovalOutcome:
    with db.write() as conn:
        session = session_row(conn, tenant, session_uuid)
        if session is None:
            raise NotFound(
                f"No session {session_uuid} for this tenant; check session_uuid "
                "(a session exists once its first turn was consolidated)."
            )
        row = turn_row(conn, tenant, session_uuid, dialog_uuid)
        if row is None:
            raise NotFound(
                f"Session {session_uuid} has no dialog {dialog_uuid}; it may be deleted already. "
                "Send a dialog uuid of this session or a memory id."
            )
        conn.execute(
            "DELETE FROM turns WHERE tenant = ? AND session_uuid = ? AND dialog_uuid = ?",
            (tenant, session_uuid, dialog_uuid),
        )
        outcome = RemovalOutcome(deleted_dialogs=[dialog_uuid], thread=session["parent_session_uuid"] or "")
        memory_id = row["memory_id"]
        if row["status"] == EXTRACTED and memory_id is not None:
            # The memory summarised the deleted words too: it goes, and its other turns are
            # extracted again so nothing else is lost.
            found = memory_row(conn, tenant, memory_id)
            outcome.removed.extend([memory_from_row(found)] if found is not None else [])
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
                (BUFFERED, tenant, session_uuid, memory_id),
            )
        outcome.deleted_session = _drop_if_empty(conn, tenant, session_uuid)
        outcome.buffered_count = buffered_count(conn, tenant, session_uuid)
        return outcome


def _drop_if_empty(conn: sqlite3.Connection, tenant: str, session_uuid: str) -> bool:
    """Delete the session when it holds no turn and no memory any more (its last turn deleted):
    no empty session is left listed. Inside the caller's write, so no append interleaves."""
    for table in ("turns", "memories"):
        held = conn.execute(
            f"SELECT 1 FROM {table} WHERE tenant = ? AND session_uuid = ? LIMIT 1", (tenant, session_uuid)
        ).fetchone()
        if held is not None:
            return False
    conn.execute("DELETE FROM sessions WHERE tenant = ? AND session_uuid = ?", (tenant, session_uuid))
    return True


def create_fork(db: SqliteDatabase, plan: ForkPlan) -> None:
    plan.check_one_session()
    target = plan.target
    with db.write() as conn:
        if session_row(conn, target.tenant, target.session_uuid) is not None:
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
