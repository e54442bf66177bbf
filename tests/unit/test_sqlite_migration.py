"""The local store opens database files written by earlier versions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory_engine.adapters.local.sqlite_rows import STORE_SCHEMA
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.models.domain import FACT_KIND, Memory, scope_key
from tests.contract.builders import TENANT, make_memory


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


def test_a_store_file_from_before_the_fact_counts_is_counted_when_opened(tmp_path: Path) -> None:
    # Given a file whose facts were stored before the scopes' counts existed (no table, no triggers)
    path = tmp_path / "old.sqlite3"
    store = SqliteStore(path)
    ann, bo = {"user_id": "ann"}, {"user_id": "bo"}
    for scope in (ann, ann, bo):
        assert store.save_memory(_fact(scope))
    store.close()
    with sqlite3.connect(path) as conn:
        for trigger in ("fact_added", "fact_removed", "fact_moved_out", "fact_moved_in"):
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE fact_scopes")

    # When the store opens it again
    reopened = SqliteStore(path)

    # Then each scope is counted, and the counts move on with the facts from there
    assert [(s.scope, s.facts) for s in reopened.fact_scopes(TENANT)] == [(ann, 2), (bo, 1)]
    assert reopened.save_memory(_fact(bo))
    assert [s.facts for s in reopened.fact_scopes(TENANT)] == [2, 2]


def _fact(scope: dict[str, str]) -> Memory:
    return make_memory(
        session_uuid="",
        parent=scope_key(scope),
        scope=scope,
        metadata={"kind": FACT_KIND},
        source_dialog_uuids=[],
    )
