"""One lazily opened SQLite connection shared by many threads, with explicit write transactions.

The store and the queue each own one `SqliteDatabase` (their own connection and lock), possibly on
the same file: WAL lets one writer and many readers work at once, and the busy timeout makes a
second writer wait instead of failing.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from memory_engine.errors import Unavailable

IN_MEMORY = ":memory:"
DEFAULT_BUSY_TIMEOUT_MS = 5_000

# Errors that mean "the database cannot serve now" (locked too long, disk full, file gone), as
# opposed to programming errors, which must surface as they are.
_UNAVAILABLE_CODES = (
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_CANTOPEN",
    "SQLITE_IOERR",
    "SQLITE_FULL",
    "SQLITE_READONLY",
    "SQLITE_PROTOCOL",
)


class SqliteDatabase:
    """A connection opened (and its schema created) on first use, never in the constructor."""

    def __init__(
        self,
        path: Path | str,
        schema: str,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        migrate: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        self._path = str(path)
        self._schema = schema
        self._migrate = migrate
        self._busy_timeout_ms = busy_timeout_ms
        # Re-entrant so a method holding the lock may call another that takes it too.
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None

    @property
    def path(self) -> str:
        return self._path

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """The connection, for statements that only read (each runs in its own implicit transaction)."""
        with self._lock, self._unavailable_on_failure():
            yield self._connection()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction: committed when the block ends, rolled back when it raises.

        BEGIN IMMEDIATE takes the write lock up front, so a read-then-write sequence inside the
        block cannot be overtaken by another connection to the same file.
        """
        with self._lock, self._unavailable_on_failure():
            conn = self._connection()
            if conn.in_transaction:  # nested in an outer write: join it
                yield conn
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close the connection; the next use opens it again."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            if self._path != IN_MEMORY and not self._path.startswith("file:"):
                Path(self._path).parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: no implicit BEGINs; transactions are exactly what write() says.
            conn = sqlite3.connect(
                self._path,
                timeout=self._busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                conn.row_factory = sqlite3.Row
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.executescript(self._schema)
                if self._migrate is not None:  # a file written by an older version: add what is new
                    self._migrate(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    @contextmanager
    def _unavailable_on_failure(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as error:
            code = getattr(error, "sqlite_errorname", "") or ""
            if not code.startswith(_UNAVAILABLE_CODES):
                raise
            raise Unavailable(
                f"The local database {self._path} is unavailable ({code}: {error}); "
                "retry shortly, and check the file's disk space and permissions if it persists."
            ) from error


def to_text(moment: datetime) -> str:
    """ISO 8601 in UTC with fixed width, so stored times also sort as text. Naive means UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def pack_vector(values: Sequence[float]) -> bytes:
    """float32 little-endian, whatever the machine's byte order (the file may move machines)."""
    packed = array("f", values)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def unpack_vector(blob: bytes | None) -> list[float]:
    if not blob:
        return []
    packed = array("f")
    packed.frombytes(blob)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tolist()
