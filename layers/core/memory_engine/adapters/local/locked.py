"""The local index's one lock: searches side by side, a write alone.

The local server runs handlers on many threads and the worker on its own, all on one
`LocalSearchIndex`. The lock guards the index's Python state (the shards' vectors and ids, the
tenants' dimensions, the tantivy writers and the searchers they reload): a search, `get` or count
reads it, an upsert, delete, clear or checkpoint changes it. It covers one call on the index (a
few milliseconds; a bulk write for its whole length), never a network call or a whole request.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["ReadWriteLock"]


class ReadWriteLock:
    """Many readers or one writer. A waiting writer stops new readers from entering, so a steady
    stream of searches cannot starve the worker's upserts. The writing thread may enter again, to
    read or write (a bulk write holds it while it upserts and checkpoints); a reader may not start
    writing."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer: int | None = None  # the thread writing
        self._depth = 0  # how many times the writing thread entered
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        if self._writer == threading.get_ident():
            yield
            return
        with self._cond:
            while self._writer is not None or self._writers_waiting:
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
        me = threading.get_ident()
        with self._cond:
            if self._writer != me:
                self._writers_waiting += 1
                try:
                    while self._writer is not None or self._readers:
                        self._cond.wait()
                finally:
                    self._writers_waiting -= 1
                self._writer = me
            self._depth += 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if not self._depth:
                    self._writer = None
                    self._cond.notify_all()
