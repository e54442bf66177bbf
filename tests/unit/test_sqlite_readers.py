"""Reads of the local store never wait on an open write transaction (WAL, read connections of their own)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from memory_engine.adapters.local.sqlite_rows import insert_session
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.models.domain import Session

# Far above a read's few milliseconds, far below the 5 s busy timeout a blocked reader would wait.
_JOIN_S = 2.0


def _session(uuid: str) -> Session:
    return Session(tenant="t", session_uuid=uuid, parent_session_uuid="thread", created_at=datetime.now(UTC))


def _sessions(store: SqliteStore) -> list[str]:
    return [session.session_uuid for session in store.list_sessions("t")]


def test_a_reader_is_not_blocked_while_a_write_transaction_is_open(tmp_path: Path) -> None:
    # Given a store with one committed session
    store = SqliteStore(tmp_path / "memory-engine.sqlite3")
    with store._db.write() as conn:
        insert_session(conn, _session("committed"))
    seen: list[list[str]] = []
    reader = threading.Thread(target=lambda: seen.append(_sessions(store)), daemon=True)

    # When a write transaction is held open (a second session written, not committed) while
    # another thread reads
    with store._db.write() as conn:
        insert_session(conn, _session("uncommitted"))
        reader.start()
        reader.join(_JOIN_S)
        returned_during_write = not reader.is_alive()

    # Then the read returned before the write ended, and saw the committed state only
    reader.join(10)
    store.close()
    assert returned_during_write
    assert seen == [["committed"]]


def test_a_read_inside_a_write_block_sees_that_blocks_changes(tmp_path: Path) -> None:
    # Given a store and an open write transaction that added a session
    store = SqliteStore(tmp_path / "memory-engine.sqlite3")
    with store._db.write() as conn:
        insert_session(conn, _session("mine"))

        # When the same thread reads inside that transaction
        found = _sessions(store)

    # Then it sees its own uncommitted write
    store.close()
    assert found == ["mine"]


def test_a_closed_store_reads_the_file_as_it_is_now(tmp_path: Path) -> None:
    # Given a store that was read from, then closed
    path = tmp_path / "memory-engine.sqlite3"
    store = SqliteStore(path)
    assert _sessions(store) == []
    store.close()

    # When another handle writes, and the closed one reads again
    other = SqliteStore(path)
    with other._db.write() as conn:
        insert_session(conn, _session("later"))
    other.close()

    # Then it sees what the other wrote
    assert _sessions(store) == ["later"]
    store.close()
