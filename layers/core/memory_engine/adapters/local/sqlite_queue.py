"""`Queue` on SQLite, with SQS FIFO semantics, for the in-process worker.

- Per message group (`group_id()` of the job, one per session): strict send order, and at most
  one message in flight; other groups are never blocked by it.
- A received message is hidden for `visibility_seconds`, and for as long again each time its
  holder `extend`s it (a job at work keeps its receipt alive, `usecases.lease`); not acked by
  then, it is delivered again (also after a restart: the table is on disk and times are
  wall-clock). The worker, its one consumer, releases at start-up what a dead process held
  (`release_in_flight`), so a crash does not leave a session waiting out the visibility timeout.
- Content-based dedup: sending a job identical to one still waiting in its group is a no-op.
- A failed job is retried later (`retry_later`: hidden for a backoff delay, its error kept) or
  parked at once (`bury`, with its error) by the worker. A message received more than
  `max_receives` times is parked by the queue itself (a worker that crashed on it every time), so
  a poison job can neither block its session nor be silently dropped.
- Dead letters are listed (`dead_letters`) and queued again (`redrive`) by `memory-engine jobs`.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from memory_engine.adapters.local.sqlite_db import SqliteDatabase
from memory_engine.models.messages import Job, parse_job
from memory_engine.models.queue import DeadJob, QueueSnapshot, ReceivedJob, unsettled_reason

log = logging.getLogger("memory_engine.queue")

DEFAULT_MAX_RECEIVES = 3
MAX_ERROR_CHARS = 2_000  # a failure's reason kept with its job, for `jobs list` and the inspector

_SCHEMA = """
CREATE TABLE IF NOT EXISTS queue_messages (
    -- AUTOINCREMENT: ids are never reused, so id order is send order for the life of the file.
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    group_id TEXT NOT NULL,
    body TEXT NOT NULL,
    receive_count INTEGER NOT NULL DEFAULT 0,
    receipt TEXT,
    visible_at REAL NOT NULL DEFAULT 0,
    sent_at REAL NOT NULL,
    last_error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS queue_messages_by_group ON queue_messages (group_id, id);
CREATE UNIQUE INDEX IF NOT EXISTS queue_messages_by_receipt ON queue_messages (receipt);

CREATE TABLE IF NOT EXISTS queue_dead (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    group_id TEXT NOT NULL,
    body TEXT NOT NULL,
    receive_count INTEGER NOT NULL,
    sent_at REAL NOT NULL,
    dead_at REAL NOT NULL,
    error TEXT NOT NULL DEFAULT ''
);
"""

# Columns added after the first release, for files written before them.
_ADDED_COLUMNS = {
    "queue_messages": ("last_error", "TEXT NOT NULL DEFAULT ''"),
    "queue_dead": ("error", "TEXT NOT NULL DEFAULT ''"),
}


def _migrate(conn: sqlite3.Connection) -> None:
    for table, (column, declaration) in _ADDED_COLUMNS.items():
        columns = {row["name"] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


# The head (oldest message) of every group that can be delivered now: visible (never received,
# released, past its visibility, or past its retry delay). A hidden head hides its whole group.
_DELIVERABLE_HEADS = """
SELECT m.id, m.group_id, m.body, m.receive_count FROM queue_messages AS m
WHERE m.id = (SELECT MIN(id) FROM queue_messages WHERE group_id = m.group_id)
  AND m.visible_at <= ?
  AND m.group_id NOT IN (SELECT value FROM json_each(?))
ORDER BY m.id
LIMIT ?
"""


class SqliteQueue:
    """The `Queue` port (producer side) plus the consumer side the local worker uses.

    Nothing touches the disk until the first call. `path` may be the store's file: the tables have
    their own names and this queue its own connection and lock.
    """

    def __init__(
        self,
        path: Path | str,
        max_receives: int = DEFAULT_MAX_RECEIVES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_receives < 1:
            raise ValueError(f"max_receives must be at least 1, got {max_receives}")
        self._db = SqliteDatabase(path, _SCHEMA, migrate=_migrate)
        self._max_receives = max_receives
        # Wall-clock seconds, not monotonic: visibility deadlines must mean the same after a restart.
        self._clock = clock

    def close(self) -> None:
        self._db.close()

    def send(self, job: Job) -> None:
        body = job.model_dump_json()
        group_id = job.group_id()
        with self._db.write() as conn:
            waiting = conn.execute(
                "SELECT 1 FROM queue_messages WHERE group_id = ? AND body = ? AND receipt IS NULL LIMIT 1",
                (group_id, body),
            ).fetchone()
            if waiting is not None:
                return  # the waiting twin will do exactly this work
            conn.execute(
                "INSERT INTO queue_messages (group_id, body, sent_at) VALUES (?, ?, ?)",
                (group_id, body, self._clock()),
            )

    def receive(self, max_messages: int = 1, visibility_seconds: float = 30) -> list[ReceivedJob]:
        """Up to `max_messages` jobs from distinct groups, oldest first; [] when none is ready."""
        received: list[ReceivedJob] = []
        taken_groups: list[str] = []
        with self._db.write() as conn:
            now = self._clock()
            hidden_until = now + max(0.0, visibility_seconds)
            while len(received) < max_messages:
                heads = conn.execute(
                    _DELIVERABLE_HEADS, (now, json.dumps(taken_groups), max_messages - len(received))
                ).fetchall()
                if not heads:
                    break
                for head in heads:
                    if head["receive_count"] >= self._max_receives:
                        # Moving it lets the group's next message become the head on the next pass.
                        self._bury(conn, head["id"], now, unsettled_reason(head["receive_count"]))
                        continue
                    receipt = uuid.uuid4().hex
                    conn.execute(
                        "UPDATE queue_messages SET receive_count = receive_count + 1, receipt = ?,"
                        " visible_at = ? WHERE id = ?",
                        (receipt, hidden_until, head["id"]),
                    )
                    taken_groups.append(head["group_id"])
                    received.append(
                        ReceivedJob(
                            receipt=receipt,
                            job=parse_job(head["body"]),
                            receive_count=head["receive_count"] + 1,
                        )
                    )
        return received

    def ack(self, receipt: str) -> bool:
        """Delete a delivered message. False when the receipt is stale (already acked, or the
        message was delivered again under a newer receipt)."""
        with self._db.write() as conn:
            return conn.execute("DELETE FROM queue_messages WHERE receipt = ?", (receipt,)).rowcount > 0

    def release(self, receipt: str, error: str | None = None) -> bool:
        """Make a delivered message visible again now; its receive still counts towards dead-lettering.
        `error` (why it failed) is kept with the message and goes with it to the dead letters."""
        with self._db.write() as conn:
            updated = conn.execute(
                "UPDATE queue_messages SET receipt = NULL, visible_at = 0,"
                " last_error = COALESCE(?, last_error) WHERE receipt = ?",
                (None if error is None else error[:MAX_ERROR_CHARS], receipt),
            ).rowcount
            return updated > 0

    def extend(self, receipt: str, visibility_seconds: float) -> bool:
        """Hide a message in hand for `visibility_seconds` from now. False when the receipt is stale."""
        with self._db.write() as conn:
            updated = conn.execute(
                "UPDATE queue_messages SET visible_at = ? WHERE receipt = ?",
                (self._clock() + max(0.0, visibility_seconds), receipt),
            ).rowcount
            return updated > 0

    def release_in_flight(self) -> int:
        """Make every job in hand visible again now. Called when the one consumer starts: what is
        in flight then was held by a process that died (kill -9, a crash), and would otherwise
        wait out its visibility timeout, its session's later jobs behind it. The receive still
        counts, so a job that kills its worker every time is parked all the same."""
        with self._db.write() as conn:
            released = conn.execute(
                "UPDATE queue_messages SET receipt = NULL, visible_at = 0 WHERE receipt IS NOT NULL"
            ).rowcount
        if released:
            log.warning("released %d jobs a stopped worker still held", released)
        return int(released)

    def snapshot(self, tenant: str) -> QueueSnapshot:
        """The tenant's waiting or in-flight jobs and its dead letters, oldest first."""
        with self._db.read() as conn:
            waiting = conn.execute("SELECT body FROM queue_messages ORDER BY id").fetchall()
        # Filtered on the parsed job's tenant, not on the group id text (a tenant may hold a '#').
        pending = [job for job in (parse_job(row["body"]) for row in waiting) if job.tenant == tenant]
        dead = [dead for dead in self.dead_letters() if dead.job.tenant == tenant]
        return QueueSnapshot(pending=pending, dead=dead)

    def retry_later(self, receipt: str, delay_seconds: float, error: str) -> bool:
        """Hide a delivered message for `delay_seconds` (a backoff), keeping the error it failed on.
        False when the receipt is stale."""
        with self._db.write() as conn:
            updated = conn.execute(
                "UPDATE queue_messages SET receipt = NULL, visible_at = ?, last_error = ? WHERE receipt = ?",
                (self._clock() + max(0.0, delay_seconds), error[:MAX_ERROR_CHARS], receipt),
            ).rowcount
            return updated > 0

    def bury(self, message: ReceivedJob, error: str) -> None:
        """Park a delivered message among the dead letters now, with the error it failed on."""
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT id FROM queue_messages WHERE receipt = ?", (message.receipt,)
            ).fetchone()
            if row is not None:
                conn.execute(
                    "UPDATE queue_messages SET last_error = ? WHERE id = ?",
                    (error[:MAX_ERROR_CHARS], row["id"]),
                )
                self._bury(conn, row["id"], self._clock(), error)

    def dead_jobs(self) -> list[Job]:
        """Jobs parked as dead, oldest first."""
        return [dead.job for dead in self.dead_letters()]

    def dead_letters(self) -> list[DeadJob]:
        """Every dead job with its error and receives, oldest first."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT id, body, receive_count, dead_at, error FROM queue_dead ORDER BY id"
            ).fetchall()
        return [
            DeadJob(
                id=str(row["id"]),
                job=parse_job(row["body"]),
                error=row["error"],
                receive_count=row["receive_count"],
                dead_at=datetime.fromtimestamp(row["dead_at"], UTC),
            )
            for row in rows
        ]

    def redrive(self, ids: Sequence[str] | None = None) -> list[DeadJob]:
        """Queue the named dead jobs (None: all) again as new messages, in the order they died."""
        wanted = None if ids is None else set(ids)
        moved = [dead for dead in self.dead_letters() if wanted is None or dead.id in wanted]
        with self._db.write() as conn:
            for dead in moved:
                # A new message, not the old row: it goes behind what its session queued meanwhile.
                conn.execute(
                    "INSERT INTO queue_messages (group_id, body, sent_at) VALUES (?, ?, ?)",
                    (dead.job.group_id(), dead.job.model_dump_json(), self._clock()),
                )
                conn.execute("DELETE FROM queue_dead WHERE id = ?", (int(dead.id),))
        return moved

    def pending_count(self) -> int:
        """Messages not yet acked: waiting or in flight (dead letters not included)."""
        with self._db.read() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM queue_messages").fetchone()[0])

    def _bury(self, conn: sqlite3.Connection, message_id: int, now: float, why: str) -> None:
        """Move a message to the dead letters. `why` is its error unless it failed with one of its
        own before (the last run's failure says more than "delivered too often")."""
        row = conn.execute(
            "SELECT group_id, body, receive_count, sent_at, last_error FROM queue_messages WHERE id = ?",
            (message_id,),
        ).fetchone()
        error = (row["last_error"] or why)[:MAX_ERROR_CHARS]
        conn.execute(
            "INSERT INTO queue_dead (group_id, body, receive_count, sent_at, dead_at, error)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (row["group_id"], row["body"], row["receive_count"], row["sent_at"], now, error),
        )
        conn.execute("DELETE FROM queue_messages WHERE id = ?", (message_id,))
        log.warning(
            "extraction job moved to dead letters after %d receives",
            row["receive_count"],
            extra={"group_id": row["group_id"], "body": row["body"]},
        )
