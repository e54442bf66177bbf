"""Every backend that runs here, behind the same `store` and `queue` fixtures.

Adding a backend is one entry in `STORE_BACKENDS`, `QUEUE_BACKENDS` or `KEY_STORE_BACKENDS`: a
context manager that gets the test's tmp_path (and, for a queue, the max receives before
dead-lettering) and yields a `Backend`, whose `open()` gives a fresh handle on the same data. Set
up whatever the backend needs around the yield (a moto `mock_aws()` with its tables and queues, or
a fresh table on the session's dynalite server, for example). A backend that keeps nothing
across handles (`persistent=False`) skips the reopen tests, saying why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar
from unittest import mock

import pytest

from memory_engine.adapters.local.sqlite_keys import SqliteKeyStore
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from tests.contract import dynalite
from tests.contract.builders import MAX_RECEIVES, ManualClock
from tests.fakes.aws import REGION, create_queue, create_table, moto_aws

Handle = TypeVar("Handle")


@dataclass(frozen=True)
class Backend(Generic[Handle]):
    name: str
    open: Callable[[], Handle]
    # True when a handle opened after another was closed sees what the first wrote (a file on disk).
    persistent: bool


@contextmanager
def _sqlite_store(tmp_path: Path) -> Iterator[Backend[Any]]:
    path = tmp_path / "memory-engine.sqlite3"
    yield Backend("sqlite", lambda: SqliteStore(path), persistent=True)


@contextmanager
def _sqlite_queue(
    tmp_path: Path, max_receives: int, clock: ManualClock | None = None
) -> Iterator[Backend[Any]]:
    # The same file name as the store's: locally both share one file, and must not collide.
    path = tmp_path / "memory-engine.sqlite3"
    now = time.time if clock is None else clock.time
    yield Backend("sqlite", lambda: SqliteQueue(path, max_receives=max_receives, clock=now), persistent=True)


@contextmanager
def _dynamodb_store(tmp_path: Path) -> Iterator[Backend[Any]]:
    from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore

    # Persistent: a new handle is a new client on the same (mocked) table.
    with moto_aws():
        table = create_table()
        yield Backend("dynamodb", lambda: DynamoDbStore(table, REGION), persistent=True)


StoreBackend = Callable[[Path], AbstractContextManager[Backend[Any]]]


def _on_dynalite(open_handle: Callable[[str, Any], Any]) -> StoreBackend:
    """A backend on a fresh table of the session's dynalite server; `open_handle(table,
    client)` gives a handle on it."""

    @contextmanager
    def backend(tmp_path: Path) -> Iterator[Backend[Any]]:
        server = dynalite.server()
        table = server.engine_table()
        yield Backend(dynalite.NAME, lambda: open_handle(table, server.client()), persistent=True)

    return backend


def _local_store(table: str, client: Any) -> Any:
    from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore

    return DynamoDbStore(table, dynamodb=client)


def _local_key_store(table: str, client: Any) -> Any:
    from memory_engine.adapters.aws.dynamodb_api_keys import DynamoDbKeyStore

    return DynamoDbKeyStore(table, dynamodb=client)


@contextmanager
def _sqs_queue(tmp_path: Path, max_receives: int, clock: ManualClock | None = None) -> Iterator[Backend[Any]]:
    from memory_engine.adapters.aws.sqs_queue import SqsQueue

    with moto_aws(), _moto_sqs_clock(clock):
        url = create_queue(max_receives=max_receives)
        yield Backend("sqs", lambda: SqsQueue(url, REGION), persistent=True)


@contextmanager
def _moto_sqs_clock(clock: ManualClock | None) -> Iterator[None]:
    """moto's SQS reads the time through two functions of its models module: on `clock` when given."""
    if clock is None:
        yield
        return
    import moto.sqs.models

    with (
        mock.patch.object(moto.sqs.models, "unix_time", lambda dt=None: clock.time()),
        mock.patch.object(moto.sqs.models, "unix_time_millis", lambda dt=None: clock.time() * 1000),
    ):
        yield


@contextmanager
def _sqlite_key_store(tmp_path: Path) -> Iterator[Backend[Any]]:
    path = tmp_path / "memory-engine.sqlite3"
    yield Backend("sqlite", lambda: SqliteKeyStore(path), persistent=True)


STORE_BACKENDS: dict[str, Callable[[Path], AbstractContextManager[Backend[Any]]]] = {
    "sqlite": _sqlite_store,
    "dynamodb": _dynamodb_store,
    dynalite.NAME: _on_dynalite(_local_store),
}


# API keys (`KeyStore`): the same one-entry rule; DynamoDB keeps them under `pk = KEY#<key_id>`.
@contextmanager
def _dynamodb_key_store(tmp_path: Path) -> Iterator[Backend[Any]]:
    from memory_engine.adapters.aws.dynamodb_api_keys import DynamoDbKeyStore
    from tests.contract.moto_keys import mocked_key_table

    with mocked_key_table() as (table, client):
        yield Backend("dynamodb", lambda: DynamoDbKeyStore(table, dynamodb=client), persistent=True)


KEY_STORE_BACKENDS: dict[str, Callable[[Path], AbstractContextManager[Backend[Any]]]] = {
    "sqlite": _sqlite_key_store,
    "dynamodb": _dynamodb_key_store,
    dynalite.NAME: _on_dynalite(_local_key_store),
}
QUEUE_BACKENDS: dict[str, Callable[[Path, int, ManualClock | None], AbstractContextManager[Backend[Any]]]] = {
    "sqlite": _sqlite_queue,
    "sqs": _sqs_queue,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Start dynalite in the background as soon as a collected test will use it."""
    if any(dynalite.NAME in item.nodeid for item in items):
        dynalite.start_early()


def pytest_sessionfinish() -> None:
    dynalite.stop()


class _Handles:
    """Opens handles on one backend and closes them all when the test ends."""

    def __init__(self, backend: Backend[Any]) -> None:
        self.backend = backend
        self._opened: list[Any] = []

    def open(self) -> Any:
        handle = self.backend.open()
        self._opened.append(handle)
        return handle

    def reopener(self, handle: Any) -> Callable[[], Any]:
        """A call that closes `handle` (as a process exit would) and opens a new one on the same data.

        Skips the test up front when the backend keeps nothing across handles.
        """
        if not self.backend.persistent:
            pytest.skip(f"the {self.backend.name} backend keeps nothing across handles: nothing to reopen")

        def reopen() -> Any:
            _close(handle)
            return self.open()

        return reopen

    def close_all(self) -> None:
        for handle in reversed(self._opened):
            _close(handle)


def _close(handle: Any) -> None:
    close = getattr(handle, "close", None)
    if callable(close):
        close()


@pytest.fixture(params=sorted(STORE_BACKENDS))
def store_handles(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[_Handles]:
    with STORE_BACKENDS[request.param](tmp_path) as backend:
        handles = _Handles(backend)
        yield handles
        handles.close_all()


@pytest.fixture
def store(store_handles: _Handles) -> Any:
    return store_handles.open()


@pytest.fixture
def reopen_store(store_handles: _Handles, store: Any) -> Callable[[], Any]:
    """Call to close `store` and get a new handle on its data (skips for non-persistent backends)."""
    return store_handles.reopener(store)


@pytest.fixture(params=sorted(QUEUE_BACKENDS))
def queue_handles(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[_Handles]:
    with QUEUE_BACKENDS[request.param](tmp_path, MAX_RECEIVES, None) as backend:
        handles = _Handles(backend)
        yield handles
        handles.close_all()


@pytest.fixture(params=sorted(QUEUE_BACKENDS))
def clocked_queue_handles(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[_Handles, ManualClock]]:
    """Handles on a queue whose visibility timeouts and delays run on a clock the test moves
    (`ManualClock.advance`): no sleep, and no answer that depends on how busy the host is."""
    clock = ManualClock()
    with QUEUE_BACKENDS[request.param](tmp_path, MAX_RECEIVES, clock) as backend:
        handles = _Handles(backend)
        yield handles, clock
        handles.close_all()


@pytest.fixture
def clocked_queue(clocked_queue_handles: tuple[_Handles, ManualClock]) -> tuple[Any, ManualClock]:
    """A queue on a clock the test moves."""
    handles, clock = clocked_queue_handles
    return handles.open(), clock


@pytest.fixture
def reopen_clocked_queue(
    clocked_queue_handles: tuple[_Handles, ManualClock], clocked_queue: tuple[Any, ManualClock]
) -> Callable[[], Any]:
    """Call to close the clocked queue and get a new handle on its messages, on the same clock."""
    return clocked_queue_handles[0].reopener(clocked_queue[0])


@pytest.fixture
def queue(queue_handles: _Handles) -> Any:
    return queue_handles.open()


@pytest.fixture
def reopen_queue(queue_handles: _Handles, queue: Any) -> Callable[[], Any]:
    """Call to close `queue` and get a new handle on its messages (skips for non-persistent backends)."""
    return queue_handles.reopener(queue)


@pytest.fixture(params=sorted(KEY_STORE_BACKENDS))
def key_store_handles(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[_Handles]:
    with KEY_STORE_BACKENDS[request.param](tmp_path) as backend:
        handles = _Handles(backend)
        yield handles
        handles.close_all()


@pytest.fixture
def key_store(key_store_handles: _Handles) -> Any:
    return key_store_handles.open()


@pytest.fixture
def reopen_key_store(key_store_handles: _Handles, key_store: Any) -> Callable[[], Any]:
    """Call to close `key_store` and get a new handle on its keys (skips for non-persistent backends)."""
    return key_store_handles.reopener(key_store)
