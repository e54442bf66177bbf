"""Reader/writer locking around an in-process adapter, applied in wiring.

The local server runs handlers on many threads and the worker on its own. Searches only read the
in-memory index, so any number run at once; an upsert, delete or clear runs alone. The lock covers
one adapter call (a few milliseconds), never a network call or a whole request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from memory_engine.ports import DocKind, IndexDocument, IndexHit, SearchIndex

T = TypeVar("T")


class ReadWriteLock:
    """Many readers or one writer. A waiting writer stops new readers from entering, so a steady
    stream of searches cannot starve the worker's upserts."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


class LockedIndex(SearchIndex):
    """A SearchIndex whose calls take a shared reader/writer lock: searches (and any other method
    of the wrapped index, such as `get`) read, upsert/delete/clear write."""

    def __init__(self, inner: SearchIndex, lock: ReadWriteLock | None = None) -> None:
        self._inner = inner
        self._lock = lock or ReadWriteLock()

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        with self._lock.writing():
            self._inner.upsert(docs)

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        with self._lock.writing():
            self._inner.delete(tenant, doc_ids)

    def clear(self, tenant: str | None = None) -> None:
        with self._lock.writing():
            self._inner.clear(tenant)

    def search_kinds(
        self,
        tenant: str,
        threads: Sequence[str],
        text: str,
        vector: Sequence[float],
        k: Mapping[DocKind, int],
    ) -> dict[DocKind, list[IndexHit]]:
        with self._lock.reading():
            return self._inner.search_kinds(tenant, threads, text, vector, k)

    def __len__(self) -> int:
        with self._lock.reading():
            return len(self._inner)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> Any:
        # Methods beyond the port (the local index's `get`, ...) read under the lock too.
        found = getattr(self._inner, name)
        if not callable(found):
            return found
        return self._reading(found)

    def _reading(self, method: Callable[..., T]) -> Callable[..., T]:
        def call(*args: Any, **kwargs: Any) -> T:
            with self._lock.reading():
                return method(*args, **kwargs)

        return call
