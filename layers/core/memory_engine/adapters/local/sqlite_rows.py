"""How the store's records map to SQLite rows: the schema, inserts and row decoding."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memory_engine.adapters.local.sqlite_db import pack_vector, to_text, unpack_vector
from memory_engine.models.domain import Memory, MemoryFields, Session, Turn
from memory_engine.models.life import MemoryLife
from memory_engine.ports.store import Buffer

# Every primary key starts with the tenant, as on every other backend.
STORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    tenant TEXT NOT NULL,
    session_uuid TEXT NOT NULL,
    parent_session_uuid TEXT NOT NULL,
    user_name TEXT NOT NULL,
    language TEXT NOT NULL,
    created_at TEXT NOT NULL,
    next_seq INTEGER NOT NULL,
    PRIMARY KEY (tenant, session_uuid)
);
CREATE INDEX IF NOT EXISTS sessions_by_thread ON sessions (tenant, parent_session_uuid);

CREATE TABLE IF NOT EXISTS turns (
    tenant TEXT NOT NULL,
    session_uuid TEXT NOT NULL,
    dialog_uuid TEXT NOT NULL,
    seq INTEGER NOT NULL,
    query TEXT NOT NULL,
    answer TEXT NOT NULL,
    user_name TEXT NOT NULL,
    npc_id TEXT,
    type INTEGER NOT NULL,
    timestamp TEXT NOT NULL,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('buffered', 'extracted', 'forgotten')),
    memory_id TEXT,
    length_limit INTEGER NOT NULL,
    embedding BLOB,
    memory_ttl_seconds INTEGER,
    PRIMARY KEY (tenant, session_uuid, dialog_uuid)
);
CREATE UNIQUE INDEX IF NOT EXISTS turns_by_seq ON turns (tenant, session_uuid, seq);
CREATE INDEX IF NOT EXISTS turns_by_status ON turns (tenant, session_uuid, status);

CREATE TABLE IF NOT EXISTS memories (
    tenant TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    session_uuid TEXT NOT NULL,
    parent_session_uuid TEXT NOT NULL,
    fields TEXT NOT NULL,
    source_dialog_uuids TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    embedding BLOB NOT NULL,
    turn_embeddings BLOB NOT NULL DEFAULT x'',
    window_embeddings BLOB NOT NULL DEFAULT x'',
    source_text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    metadata TEXT NOT NULL,
    scope TEXT NOT NULL DEFAULT '{}',
    expires_at TEXT,
    life TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant, memory_id)
);
CREATE INDEX IF NOT EXISTS memories_by_session ON memories (tenant, session_uuid, first_seq);
-- A scope's memories (memory bank, chat memory) are its thread's: listed in memory id order.
CREATE INDEX IF NOT EXISTS memories_by_thread ON memories (tenant, parent_session_uuid, memory_id);

-- A tenant's retention (usecases/retention.py): every memory saved expires that many days after
-- its creation (`Memory.retained`).
CREATE TABLE IF NOT EXISTS tenant_settings (
    tenant TEXT NOT NULL PRIMARY KEY,
    retention_days INTEGER
);

CREATE TABLE IF NOT EXISTS characters (
    tenant TEXT NOT NULL,
    thread TEXT NOT NULL,
    registry TEXT NOT NULL,
    PRIMARY KEY (tenant, thread)
);

-- A thread's statements record (models/statements.py), written with a compare-and-set on version.
CREATE TABLE IF NOT EXISTS statements (
    tenant TEXT NOT NULL,
    thread TEXT NOT NULL,
    version INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (tenant, thread)
);

-- Deletes in flight (models/deletes.py): recorded before a delete's first change, removed after
-- its last; the sweep finishes those begun minutes ago, oldest first.
CREATE TABLE IF NOT EXISTS deletes_begun (
    tenant TEXT NOT NULL,
    route TEXT NOT NULL,
    session_uuid TEXT NOT NULL,
    target TEXT NOT NULL,
    begun TEXT NOT NULL,
    intent TEXT NOT NULL,
    PRIMARY KEY (tenant, route, session_uuid, target)
);
CREATE INDEX IF NOT EXISTS deletes_by_begun ON deletes_begun (begun);
"""


def migrate_store(conn: sqlite3.Connection) -> None:
    """Add what newer versions store to a file an older version wrote (idempotent)."""
    columns = {row["name"] for row in conn.execute("PRAGMA table_info(memories)")}
    if "scope" not in columns:
        conn.execute("ALTER TABLE memories ADD COLUMN scope TEXT NOT NULL DEFAULT '{}'")
    if "turn_embeddings" not in columns:
        conn.execute("ALTER TABLE memories ADD COLUMN turn_embeddings BLOB NOT NULL DEFAULT x''")
    if "window_embeddings" not in columns:
        conn.execute("ALTER TABLE memories ADD COLUMN window_embeddings BLOB NOT NULL DEFAULT x''")
    if "expires_at" not in columns:
        conn.execute("ALTER TABLE memories ADD COLUMN expires_at TEXT")
    # Partial: only expiring memories are in it, so the sweep reads what expires, not the table.
    # Created here, after the column exists in a file of an older version.
    conn.execute(
        "CREATE INDEX IF NOT EXISTS memories_by_expiry ON memories (expires_at, tenant, memory_id)"
        " WHERE expires_at IS NOT NULL"
    )
    if "life" not in columns:
        conn.execute("ALTER TABLE memories ADD COLUMN life TEXT NOT NULL DEFAULT '{}'")
    _count_facts(conn)
    turn_columns = {row["name"] for row in conn.execute("PRAGMA table_info(turns)")}
    if "embedding" not in turn_columns:
        conn.execute("ALTER TABLE turns ADD COLUMN embedding BLOB")
    if "memory_ttl_seconds" not in turn_columns:
        conn.execute("ALTER TABLE turns ADD COLUMN memory_ttl_seconds INTEGER")


# A memory-bank fact: what a scope's count counts (`Memory.is_fact`, and no session).
_FACT = "{row}.session_uuid = '' AND json_extract({row}.metadata, '$.kind') = 'fact'"
# Each scope's count of facts, kept by triggers in the transaction of every insert, delete or
# update of a fact, so the inspector's page of scopes reads one row a scope however many facts it
# holds. A scope's row goes with its last fact. `scope` is that of the fact that made the row.
_FACT_COUNTS = f"""
CREATE TABLE IF NOT EXISTS fact_scopes (
    tenant TEXT NOT NULL,
    thread TEXT NOT NULL,
    facts INTEGER NOT NULL,
    scope TEXT NOT NULL,
    PRIMARY KEY (tenant, thread)
);
CREATE TRIGGER IF NOT EXISTS fact_added AFTER INSERT ON memories WHEN {_FACT.format(row="NEW")}
BEGIN
    INSERT INTO fact_scopes (tenant, thread, facts, scope)
    VALUES (NEW.tenant, NEW.parent_session_uuid, 1, NEW.scope)
    ON CONFLICT (tenant, thread) DO UPDATE SET facts = facts + 1;
END;
CREATE TRIGGER IF NOT EXISTS fact_removed AFTER DELETE ON memories WHEN {_FACT.format(row="OLD")}
BEGIN
    UPDATE fact_scopes SET facts = facts - 1 WHERE tenant = OLD.tenant AND thread = OLD.parent_session_uuid;
    DELETE FROM fact_scopes WHERE tenant = OLD.tenant AND thread = OLD.parent_session_uuid AND facts <= 0;
END;
CREATE TRIGGER IF NOT EXISTS fact_moved_out AFTER UPDATE OF session_uuid, parent_session_uuid, metadata
ON memories WHEN {_FACT.format(row="OLD")}
    AND NOT ({_FACT.format(row="NEW")} AND NEW.parent_session_uuid = OLD.parent_session_uuid)
BEGIN
    UPDATE fact_scopes SET facts = facts - 1 WHERE tenant = OLD.tenant AND thread = OLD.parent_session_uuid;
    DELETE FROM fact_scopes WHERE tenant = OLD.tenant AND thread = OLD.parent_session_uuid AND facts <= 0;
END;
CREATE TRIGGER IF NOT EXISTS fact_moved_in AFTER UPDATE OF session_uuid, parent_session_uuid, metadata
ON memories WHEN {_FACT.format(row="NEW")}
    AND NOT ({_FACT.format(row="OLD")} AND NEW.parent_session_uuid = OLD.parent_session_uuid)
BEGIN
    INSERT INTO fact_scopes (tenant, thread, facts, scope)
    VALUES (NEW.tenant, NEW.parent_session_uuid, 1, NEW.scope)
    ON CONFLICT (tenant, thread) DO UPDATE SET facts = facts + 1;
END;
"""


def _count_facts(conn: sqlite3.Connection) -> None:
    """The scopes' counts and their triggers. A file written before them is counted here, once:
    under the write lock, from scratch, so two processes opening it at once count it right."""
    made = "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'fact_moved_in'"
    if conn.execute(made).fetchone():
        return
    conn.executescript(
        f"""BEGIN IMMEDIATE;
        {_FACT_COUNTS}
        DELETE FROM fact_scopes;
        INSERT INTO fact_scopes (tenant, thread, facts, scope)
        SELECT tenant, thread, facts, scope FROM (
            SELECT tenant, parent_session_uuid AS thread, count(*) AS facts, scope, min(memory_id)
            FROM memories AS m WHERE {_FACT.format(row="m")} GROUP BY tenant, parent_session_uuid
        );
        COMMIT;"""
    )


def insert_session(conn: sqlite3.Connection, session: Session) -> None:
    conn.execute(
        "INSERT INTO sessions (tenant, session_uuid, parent_session_uuid, user_name, language, created_at,"
        " next_seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            session.tenant,
            session.session_uuid,
            session.parent_session_uuid,
            session.user_name,
            session.language,
            to_text(session.created_at),
            session.next_seq,
        ),
    )


def insert_turns(conn: sqlite3.Connection, turns: Sequence[Turn]) -> None:
    conn.executemany(
        "INSERT INTO turns (tenant, session_uuid, dialog_uuid, seq, query, answer, user_name, npc_id, type,"
        " timestamp, created_at, status, memory_id, length_limit, embedding, memory_ttl_seconds)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                turn.tenant,
                turn.session_uuid,
                turn.dialog_uuid,
                turn.seq,
                turn.query,
                turn.answer,
                turn.user_name,
                turn.npc_id,
                int(turn.type),
                to_text(turn.timestamp),
                to_text(turn.created_at),
                turn.status.value,
                turn.memory_id,
                turn.length_limit,
                None if turn.embedding is None else pack_vector(turn.embedding),
                turn.memory_ttl_seconds,
            )
            for turn in turns
        ],
    )


def retention_days(conn: sqlite3.Connection, tenant: str) -> int | None:
    row = conn.execute("SELECT retention_days FROM tenant_settings WHERE tenant = ?", (tenant,)).fetchone()
    return None if row is None else row["retention_days"]


def save_retention(conn: sqlite3.Connection, tenant: str, days: int | None) -> None:
    conn.execute(
        "INSERT INTO tenant_settings (tenant, retention_days) VALUES (?, ?)"
        " ON CONFLICT (tenant) DO UPDATE SET retention_days = excluded.retention_days",
        (tenant, days),
    )


def buffers(conn: sqlite3.Connection) -> list[Buffer]:
    """Per session with buffered turns, their count and the oldest one's arrival (`Store.buffers`)."""
    rows = conn.execute(
        "SELECT tenant, session_uuid, COUNT(*) AS turns, MIN(created_at) AS oldest FROM turns"
        " WHERE status = 'buffered' GROUP BY tenant, session_uuid ORDER BY tenant, session_uuid"
    ).fetchall()
    return [
        Buffer(row["tenant"], row["session_uuid"], row["turns"], datetime.fromisoformat(row["oldest"]))
        for row in rows
    ]


def expired_ids(conn: sqlite3.Connection, now: str, limit: int) -> list[tuple[str, str]]:
    """(tenant, memory id) of up to `limit` memories expired at `now` (`to_text`), soonest first:
    read from the partial index of expiring memories."""
    rows = conn.execute(
        "SELECT tenant, memory_id FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?"
        " ORDER BY expires_at, tenant, memory_id LIMIT ?",
        (now, max(limit, 0)),
    ).fetchall()
    return [(row["tenant"], row["memory_id"]) for row in rows]


def insert_memories(conn: sqlite3.Connection, memories: Sequence[Memory]) -> None:
    """Insert the memories, each under its tenant's retention (read in the same transaction)."""
    days = {tenant: retention_days(conn, tenant) for tenant in {memory.tenant for memory in memories}}
    memories = [memory.retained(days[memory.tenant]) for memory in memories]
    conn.executemany(
        "INSERT INTO memories (tenant, memory_id, session_uuid, parent_session_uuid, fields,"
        " source_dialog_uuids, first_seq, last_seq, embedding, turn_embeddings, window_embeddings,"
        " source_text, created_at, metadata, scope, expires_at, life)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                memory.tenant,
                memory.memory_id,
                memory.session_uuid,
                memory.parent_session_uuid,
                _json(memory.fields.model_dump(mode="json")),
                _json(memory.source_dialog_uuids),
                memory.first_seq,
                memory.last_seq,
                pack_vector(memory.embedding),
                _packed(memory.turn_embeddings),
                _packed(memory.window_embeddings),
                memory.source_text,
                to_text(memory.created_at),
                _json(memory.metadata),
                _json(memory.scope),
                _expiry(memory),
                _life(memory),
            )
            for memory in memories
        ],
    )


def _life(memory: Memory) -> str:
    # Defaults left out: most memories' life is only their event time.
    return memory.life.model_dump_json(exclude_defaults=True)


def _packed(vectors: Sequence[Sequence[float]]) -> bytes:
    """Vectors of equal length as one blob (`_split` cuts it back by the number of source turns)."""
    return pack_vector([value for vector in vectors for value in vector])


def update_memory_row(conn: sqlite3.Connection, memory: Memory) -> bool:
    """Replace what may change in a stored memory; False when it is not stored."""
    updated = conn.execute(
        "UPDATE memories SET fields = ?, embedding = ?, turn_embeddings = ?, window_embeddings = ?,"
        " source_text = ?, metadata = ?, scope = ?, expires_at = ?, life = ?"
        " WHERE tenant = ? AND memory_id = ?",
        (
            _json(memory.fields.model_dump(mode="json")),
            pack_vector(memory.embedding),
            _packed(memory.turn_embeddings),
            _packed(memory.window_embeddings),
            memory.source_text,
            _json(memory.metadata),
            _json(memory.scope),
            _expiry(memory),
            _life(memory),
            memory.tenant,
            memory.memory_id,
        ),
    ).rowcount
    return updated > 0


def turn_from_row(row: sqlite3.Row) -> Turn:
    values = dict(row)
    packed = values.pop("embedding", None)
    return Turn.model_validate({**values, "embedding": None if packed is None else unpack_vector(packed)})


# A memory row with its vectors read as empty blobs (memory_from_row gives empty lists).
MEMORY_COLUMNS_WITHOUT_VECTORS = (
    "tenant, memory_id, session_uuid, parent_session_uuid, fields, source_dialog_uuids, first_seq,"
    " last_seq, x'' AS embedding, x'' AS turn_embeddings, x'' AS window_embeddings, source_text, created_at,"
    " metadata, scope, expires_at, life"
)


def memory_from_row(row: sqlite3.Row) -> Memory:
    sources = json.loads(row["source_dialog_uuids"])
    return Memory(
        tenant=row["tenant"],
        memory_id=row["memory_id"],
        session_uuid=row["session_uuid"],
        parent_session_uuid=row["parent_session_uuid"],
        fields=MemoryFields.model_validate_json(row["fields"]),
        source_dialog_uuids=sources,
        first_seq=row["first_seq"],
        last_seq=row["last_seq"],
        embedding=unpack_vector(row["embedding"]),
        turn_embeddings=_split(unpack_vector(row["turn_embeddings"]), len(sources)),
        window_embeddings=_split(unpack_vector(row["window_embeddings"]), len(sources)),
        source_text=row["source_text"],
        created_at=row["created_at"],
        metadata=json.loads(row["metadata"]),
        scope=json.loads(row["scope"]),
        expires_at=row["expires_at"],
        life=MemoryLife.model_validate_json(row["life"]),
    )


def _expiry(memory: Memory) -> str | None:
    # Fixed-width UTC text: compared as text with `to_text(now)` in SQL.
    return None if memory.expires_at is None else to_text(memory.expires_at)


def _split(values: list[float], parts: int) -> list[list[float]]:
    if not values or parts <= 0 or len(values) % parts:
        return []
    size = len(values) // parts
    return [values[i : i + size] for i in range(0, len(values), size)]


def _json(value: Any) -> str:
    # Readable Korean (and any other script) in the file, for anyone who opens it with sqlite3.
    return json.dumps(value, ensure_ascii=False)
