"""Background work below the server's requests, without holding the interpreter down there.

The local worker's embedding is background work: on a small machine its model's threads compete
with the server's requests for the cores, so they run `MEMORY_ENGINE_WORKER_NICE` steps lower.
The worker's own Python (extraction, indexing) does not: a thread holding the interpreter at a
lower priority is kept off the cores by the rest of the host while every request thread waits for
the interpreter it holds (issue 42: 30-58 ms stretches of a retrieve waiting on a worker thread
that sat on the run queue). So only the model runs low, on a thread of its own.
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from memory_engine.edge.logsafe import error_details
from memory_engine.ports import Embedder, EmbedMode

log = logging.getLogger("memory_engine.worker")

T = TypeVar("T")


def lower_priority(nice: int) -> None:
    """Raise the calling thread's nice value by `nice` (Linux: niceness is per thread, and threads
    the caller starts later, such as an embedding runtime's pool, inherit it). Elsewhere (no
    per-thread priority) it does nothing."""
    if nice <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + nice)
    except OSError as error:  # a sandbox that forbids it: run at normal priority
        log.warning("could not lower the worker's priority", extra=error_details(error))


class LowPriorityEmbedder:
    """An in-process model whose every call runs on one thread `nice` steps below its callers: the
    model loads there on its first call, so the runtime's pool threads it starts inherit that
    priority too. The caller waits without the interpreter; its deadline goes with the call."""

    def __init__(self, inner: Embedder, nice: int) -> None:
        self.inner = inner
        self.nice = nice
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return self._call(lambda: self.inner.dimension)

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        return self._call(lambda: self.inner.embed(texts, mode=mode))

    def _call(self, work: Callable[[], T]) -> T:
        if self.nice <= 0:
            return work()
        context = contextvars.copy_context()  # the caller's deadline and cancellation
        return self._thread().submit(context.run, work).result()

    def _thread(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    1, "memory-engine-embedding", initializer=lower_priority, initargs=(self.nice,)
                )
            return self._pool
