"""How each backend breaks, so that every fault scenario of `test_faults` runs on each of them.

- local: SQLite store and queue in one file, the in-process worker. The killed worker is a real
  subprocess, SIGKILLed between extraction and write; the store fails as on a full disk (SQLite's
  `max_page_count`); the queue's own connection is made read-only.
- moto: the AWS adapters on moto, in process: DynamoDB store and keys, SQS FIFO queue with its
  dead-letter queue, the worker Lambda's handler fed as the event source mapping would. The search
  index stays the local in-memory one: moto has no OpenSearch data plane. A subprocess cannot share
  the in-process mock, so the kill is a `BaseException` raised as the worker's memory write goes
  out: no `except Exception` in the handler or its batch processor runs, the message is neither
  deleted nor released, and SQS hands it out again once its visibility timeout runs out. A
  failing DynamoDB or SQS call is botocore answering 500 InternalServerError for that operation,
  as the service would once the client's own retries gave up.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.stack import LocalStack, local_stack, moto_stack

ROOT = Path(__file__).resolve().parents[2]
# How long a job stays hidden once received by a worker that then dies, before it comes back.
SHORT_VISIBILITY_SECONDS = 1


@dataclass(frozen=True)
class Backend:
    name: str
    open: Callable[..., AbstractContextManager[LocalStack]]  # (tmp_path, **local_stack options)
    # Runs a worker on the next job and kills it once extracted, before its memory is written.
    kill_worker_between_extraction_and_write: Callable[[LocalStack, Path], None]
    # While open: every store write fails (reads still work), then the store is healthy again.
    store_writes_fail: Callable[[LocalStack], AbstractContextManager[None]]
    # While open: every queue send fails.
    queue_sends_fail: Callable[[LocalStack], AbstractContextManager[None]]
    # Every record the store holds, down to a turn's overflow parts: a half-written turn shows here.
    records: Callable[[LocalStack], int]
    # What no error message may show a client: the database file, the table, queue or account.
    private: tuple[str, ...]

    def leaked(self, message: str) -> list[str]:
        return [secret for secret in self.private if secret in message]


# -- local ---------------------------------------------------------------------------------------

KILLABLE_WORKER = """
import sys, time
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.engine import Engine
from memory_engine.limits import Limits
from memory_engine.settings import Settings
from memory_engine.usecases import extract
from tests.fakes.ports import EchoExtractor, HashEmbedder

class StopsBeforeWriting:
    def __init__(self, store): self._store = store
    def __getattr__(self, name): return getattr(self._store, name)
    def save_memory(self, memory):
        print("extracted, about to write", flush=True)
        time.sleep(600)  # killed here

path, hidden = sys.argv[1], float(sys.argv[2])
queue = SqliteQueue(path)
store = StopsBeforeWriting(SqliteStore(path))
engine = Engine(Limits.of(Settings()), store, queue, LocalSearchIndex(), HashEmbedder(), EchoExtractor())
[message] = queue.receive(1, visibility_seconds=hidden)
extract.run(engine, message.job)
"""


def _kill_local_worker(stack: LocalStack, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])}
    database = str(tmp_path / "memory-engine.sqlite3")
    worker = subprocess.Popen(
        [sys.executable, "-c", KILLABLE_WORKER, database, str(SHORT_VISIBILITY_SECONDS)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None and "about to write" in worker.stdout.readline()
    worker.kill()
    worker.wait(30)
    assert worker.returncode == -9


@contextmanager
def _local_disk_full(stack: LocalStack) -> Iterator[None]:
    """No page may be added to the database file any more, as on a full disk."""
    with stack.engine.store._db.writer() as conn:  # type: ignore[attr-defined]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
    try:
        yield
    finally:
        with stack.engine.store._db.writer() as conn:  # type: ignore[attr-defined]
            conn.execute("PRAGMA max_page_count = 1073741823")


@contextmanager
def _local_queue_read_only(stack: LocalStack) -> Iterator[None]:
    """The queue's own connection may not write (SQLITE_READONLY); the store's still may."""
    with stack.queue._db.writer() as conn:  # type: ignore[attr-defined]
        conn.execute("PRAGMA query_only = ON")
    try:
        yield
    finally:
        with stack.queue._db.writer() as conn:  # type: ignore[attr-defined]
            conn.execute("PRAGMA query_only = OFF")


def _local_records(stack: LocalStack) -> int:
    with stack.engine.store._db.read() as conn:  # type: ignore[attr-defined]
        tables = ["sessions", "turns", "memories", "characters"]
        return sum(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in tables)


LOCAL = Backend(
    "local",
    lambda tmp_path, **options: local_stack(tmp_path, **options),
    _kill_local_worker,
    _local_disk_full,
    _local_queue_read_only,
    _local_records,
    private=(".sqlite3", "memory-engine"),
)


# -- moto ----------------------------------------------------------------------------------------


class Killed(BaseException):
    """The worker's process dying: not an `Exception`, so nothing on the way out handles it."""


def _on_call(service: str, operation: str, answer: Callable[..., Any]) -> AbstractContextManager[None]:
    """`answer` sees every `operation` call of the shared client before it is sent."""
    from memory_engine.adapters.aws import clients
    from tests.fakes.aws import REGION

    events = clients.client(service, REGION).meta.events
    event, unique_id = f"before-call.{service}.{operation}", f"fault-{operation}"

    @contextmanager
    def registered() -> Iterator[None]:
        events.register(event, answer, unique_id=unique_id)
        try:
            yield
        finally:
            events.unregister(event, unique_id=unique_id)

    return registered()


def _server_error(**_: Any) -> tuple[Any, dict[str, Any]]:
    """botocore's (http response, parsed body) for a 500: the call raises InternalServerError."""
    error = {"Code": "InternalServerError", "Message": "We encountered an internal error."}
    return types.SimpleNamespace(status_code=500), {"Error": error, "ResponseMetadata": {}}


def _kill_lambda_worker(stack: LocalStack, tmp_path: Path) -> None:
    from functions.extraction_worker.handler import lambda_handler
    from tests.fakes.sqs_lambda import EventSourceMapping

    def dies(**_: Any) -> None:
        raise Killed

    url: str = stack.queue.queue_url  # type: ignore[attr-defined]
    mapping = EventSourceMapping(
        url, lambda_handler, batch_size=1, visibility_seconds=SHORT_VISIBILITY_SECONDS
    )
    # The worker's one write is the memory's transaction: it dies with the memory extracted.
    with _on_call("dynamodb", "TransactWriteItems", dies), pytest.raises(Killed):
        mapping.poll()


def _table_items(stack: LocalStack) -> int:
    from memory_engine.adapters.aws import clients
    from tests.fakes.aws import REGION, TABLE

    count: int = clients.client("dynamodb", REGION).scan(TableName=TABLE, Select="COUNT")["Count"]
    return count


MOTO = Backend(
    "moto",
    lambda tmp_path, **options: moto_stack(**options),
    _kill_lambda_worker,
    lambda stack: _on_call("dynamodb", "TransactWriteItems", _server_error),
    lambda stack: _on_call("sqs", "SendMessage", _server_error),
    _table_items,
    private=("123456789012", "memory-engine"),  # moto's account id; the table's and queue's names
)

BACKENDS = {backend.name: backend for backend in (LOCAL, MOTO)}
