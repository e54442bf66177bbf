"""The local store opens database files written by earlier versions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory_engine.adapters.local.sqlite_rows import STORE_SCHEMA
from memory_engine.adapters.local.sqlite_store import SqliteStore


def test_a_store_file_from_before_turn_vectors_is_migrated(tmp_path: Path) -> None:
    # Given a database whose memories table predates the turn_embeddings column
    path = tmp_path / "old.sqlite3"
    old_schema = STORE_SCHEMA.replace("    turn_embeddings BLOB NOT NULL DEFAULT x'',\n", "")
    with sqlite3.connect(path) as conn:
        conn.executescript(old_schema)

    # When the store opens it and lists memories
    store = SqliteStore(path)
    memories = list(store.iter_memories())

    # Then the column exists and nothing failed
    with sqlite3.connect(path) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
    assert "turn_embeddings" in columns
    assert memories == []
