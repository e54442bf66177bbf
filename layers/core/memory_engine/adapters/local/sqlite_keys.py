"""`KeyStore` on SQLite: the local server's API keys, in a table of the engine's database file."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from memory_engine.adapters.local.sqlite_db import SqliteDatabase, to_text
from memory_engine.errors import Conflict, NotFound
from memory_engine.models.keys import ApiKey

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    key_hash TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    replaced_by TEXT
);
CREATE INDEX IF NOT EXISTS api_keys_by_tenant ON api_keys (tenant, created_at);
"""


class SqliteKeyStore:
    """The `KeyStore` port over stdlib sqlite3. `path` may be the store's file: its own table,
    connection and lock. Nothing touches the disk until the first call."""

    def __init__(self, path: Path | str) -> None:
        self._db = SqliteDatabase(path, _SCHEMA)

    def close(self) -> None:
        self._db.close()

    def create_key(self, key: ApiKey) -> None:
        with self._db.write() as conn:
            _insert(conn, key)

    def get_key(self, key_id: str) -> ApiKey | None:
        with self._db.read() as conn:
            row = _row(conn, key_id)
        return None if row is None else _key(row)

    def list_keys(self, tenant: str | None = None) -> list[ApiKey]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT * FROM api_keys WHERE ? IS NULL OR tenant = ? ORDER BY created_at, key_id",
                (tenant, tenant),
            ).fetchall()
        return [_key(row) for row in rows]

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey:
        with self._db.write() as conn:
            key = _existing(conn, key_id)
            if key.revoked_at is None or at < key.revoked_at:
                conn.execute("UPDATE api_keys SET revoked_at = ? WHERE key_id = ?", (to_text(at), key_id))
            return _existing(conn, key_id)

    def rotate_key(self, key_id: str, replacement: ApiKey, revoke_at: datetime) -> ApiKey:
        with self._db.write() as conn:
            key = _existing(conn, key_id)
            if key.revoked_at is not None or key.replaced_by is not None:
                raise Conflict(
                    f"Key {key_id} is already revoked or rotated: create a new key for its tenant instead.",
                    [{"field": "key_id", "message": "revoked or rotated already"}],
                )
            _insert(conn, replacement)
            conn.execute(
                "UPDATE api_keys SET revoked_at = ?, replaced_by = ? WHERE key_id = ?",
                (to_text(revoke_at), replacement.key_id, key_id),
            )
            return _existing(conn, key_id)


def _insert(conn: sqlite3.Connection, key: ApiKey) -> None:
    try:
        conn.execute(
            "INSERT INTO api_keys (key_id, tenant, key_hash, label, created_at, revoked_at, replaced_by)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key.key_id,
                key.tenant,
                key.key_hash,
                key.label,
                to_text(key.created_at),
                to_text(key.revoked_at) if key.revoked_at else None,
                key.replaced_by,
            ),
        )
    except sqlite3.IntegrityError as error:
        raise Conflict(f"Key id {key.key_id} is taken; draw another.") from error


def _row(conn: sqlite3.Connection, key_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute("SELECT * FROM api_keys WHERE key_id = ?", (key_id,)).fetchone()
    return row


def _existing(conn: sqlite3.Connection, key_id: str) -> ApiKey:
    row = _row(conn, key_id)
    if row is None:
        raise NotFound(
            f"No API key with id {key_id}; `memory-engine keys list` shows the ids.",
            [{"field": "key_id", "message": "unknown key id"}],
        )
    return _key(row)


def _key(row: sqlite3.Row) -> ApiKey:
    return ApiKey.model_validate(dict(row))
