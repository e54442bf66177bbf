"""A lazily opened SQLite file shared by many threads: one write connection, pooled readers.

The store and the queue each own one `SqliteDatabase` (their own write connection and lock),
possibly on the same file: the busy timeout makes a second writer wait instead of failing. Reads
go through read-only connections of their own, one per concurrent reader, taken from a pool: in
WAL mode a reader sees the last committed state while a write transaction is open, so a retrieve
never waits on the worker's or a consolidate's write. An in-memory database has one connection
only, so there reads share the write connection and its lock.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

# Re-exported: the row codecs import them from here.
from memory_engine.adapters.encoding import pack_vector, to_text, unpack_vector
from memory_engine.errors import Unavailable

__all__ = ["SqliteDatabase", "pack_vector", "to_text", "unpack_vector"]

log = logging.getLogger("memory_engine.sqlite")
IN_MEMORY = ":memory:"
DEFAULT_BUSY_TIMEOUT_MS = 5_000
MMAP_BYTES = 1 << 30  # address space, not memory: pages load on demand and stay the OS's
CACHE_KIB = 64 * 1024
IDLE_READERS = 8  # read connections kept open between bursts; more are opened when needed

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
        # Brings a file written by an older version up to `schema` (CREATE IF NOT EXISTS cannot).
        self._migrate = migrate
        self._busy_timeout_ms = busy_timeout_ms
        # Re-entrant so a method holding the lock may call another that takes it too.
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._created = False  # the file exists with its schema (stays true once it did)
        # Idle read connections, and a generation that close() bumps so that a connection in use
        # while the database closes is closed when returned instead of pooled.
        self._pool_lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._generation = 0
        self._writing = threading.local()  # how deep this thread is in write() blocks

    @property
    def path(self) -> str:
        return self._path

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection for statements that only read; the block sees one committed snapshot.

        It never waits on a write transaction: on a file it is a read-only connection of its own.
        Inside a write() block of the same thread it is that block's connection, so the block
        reads its own uncommitted changes.
        """
        if not self._pooled_reads() or self._writing_here():
            with self._lock, self._unavailable_on_failure():
                yield self._connection()
            return
        with self._unavailable_on_failure():
            conn, generation = self._take_reader()
            try:
                conn.execute("BEGIN")  # deferred: the snapshot starts at the first read
                try:
                    yield conn
                finally:
                    if conn.in_transaction:
                        conn.execute("COMMIT")
            except BaseException:
                conn.close()  # its state is unknown: never pooled again
                raise
            self._give_back(conn, generation)

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
            self._writing.depth = 1
            try:
                yield conn
            except BaseException:
                # SQLite may have rolled back already (SQLITE_FULL, SQLITE_IOERR do): a second
                # ROLLBACK would fail and hide the real error.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                self._writing.depth = 0
            conn.execute("COMMIT")

    @contextmanager
    def writer(self) -> Iterator[sqlite3.Connection]:
        """The write connection outside any transaction, for connection settings (PRAGMAs)."""
        with self._lock, self._unavailable_on_failure():
            yield self._connection()

    def close(self) -> None:
        """Close the connections; the next use opens them again."""
        with self._pool_lock:
            idle, self._idle = self._idle, []
            self._generation += 1
        for conn in idle:
            conn.close()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _writing_here(self) -> bool:
        depth: int = getattr(self._writing, "depth", 0)
        return depth > 0

    def _pooled_reads(self) -> bool:
        return self._path != IN_MEMORY and not self._path.startswith("file:")

    def _take_reader(self) -> tuple[sqlite3.Connection, int]:
        with self._pool_lock:
            generation = self._generation
            if self._idle:
                return self._idle.pop(), generation
        if not self._created:  # the file, its schema and WAL mode exist before a reader opens it
            with self._lock:
                self._connection()
        uri = f"file:{quote(str(Path(self._path).resolve()))}?mode=ro"
        conn = sqlite3.connect(
            uri,
            uri=True,
            timeout=self._busy_timeout_ms / 1000,
            isolation_level=None,
            check_same_thread=False,  # pooled: a connection serves one thread at a time, any thread
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        return conn, generation

    def _give_back(self, conn: sqlite3.Connection, generation: int) -> None:
        with self._pool_lock:
            if generation == self._generation and len(self._idle) < IDLE_READERS:
                self._idle.append(conn)
                return
        conn.close()

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
                # Reads through a memory map and a 64 MB page cache (default: 2 MB, read() calls):
                # retrieve reads candidate memories at random from a file that grows by ~5 KB each.
                conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
                conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
                conn.executescript(self._schema)
                if self._migrate is not None:
                    self._migrate(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
            self._created = True
        return self._conn

    @contextmanager
    def _unavailable_on_failure(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as error:
            code = getattr(error, "sqlite_errorname", "") or ""
            if not code.startswith(_UNAVAILABLE_CODES):
                raise
            # The caller learns what to do; the operator's log gets the file and the reason.
            log.warning("local database unavailable", extra={"path": self._path, "code": code})
            raise Unavailable(
                "The database is unavailable (busy, full or unreadable); nothing was written. "
                "Retry shortly; if it persists, the operator should check the server's disk."
            ) from error
