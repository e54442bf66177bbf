"""The local server's background step: embed each turn when it arrives, off the request path.

Consolidate tells the engine's `arrivals` of every newly buffered turn (`ports.TurnArrivals`);
here that puts the turn on a short list and returns. One thread, at the worker's priority and
with the worker's copy of the model, embeds the list's turns into the process's vector cache and
analyses their words (`usecases.arrived.prepare`), so a retrieve scores them by both without
doing either on its own request path, and the session's extraction job finds them embedded.

Bounded: at most `capacity` turns wait; past it the tenant with the most waiting loses its oldest
one (its vector then comes from the worker's job, and until then a retrieve finds it by its
words). Fair between tenants: each step takes their waiting turns in turn, so a tenant sending
many long turns neither pushes another's few turns off the list nor keeps them waiting behind
its own (issue 42: 20 turns of 200,000 characters queued ahead of another tenant's 20 short ones).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict, deque

from memory_engine import deadline
from memory_engine.deadline import Deadline
from memory_engine.edge.logsafe import error_details
from memory_engine.engine import Engine
from memory_engine.errors import Cancelled
from memory_engine.models.domain import Turn
from memory_engine.usecases import arrived
from memory_engine_app.worker import lower_priority

log = logging.getLogger("memory_engine.worker")

# Turns waiting at most (each holds its text: two 100,000-character messages at worst).
CAPACITY = 64
# Turns embedded in one step: one embed call, its texts each capped at `embed_max_chars`.
STEP_TURNS = 8


class TurnEmbedder:
    """`buffered` (the `TurnArrivals` port) queues a turn; `start` runs `drain` in a thread of its
    own until `stop`; tests call `drain` directly."""

    def __init__(self, engine: Engine, nice: int = 0, capacity: int = CAPACITY) -> None:
        self._engine = engine
        self._nice = nice
        self._capacity = max(1, capacity)
        # Each tenant's waiting turns, oldest first; the tenants in the order they are served.
        self._waiting: OrderedDict[str, deque[Turn]] = OrderedDict()
        self._count = 0  # turns in `_waiting`: kept, not summed over every tenant per turn
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def buffered(self, turn: Turn) -> None:
        with self._lock:
            self._waiting.setdefault(turn.tenant, deque()).append(turn)
            self._count += 1
            if self._count > self._capacity:
                self._drop_from_longest()
        self._ready.set()

    def waiting(self) -> int:
        with self._lock:
            return self._count

    def _drop_from_longest(self) -> None:
        """Full: the oldest turn of the tenant with the most waiting (the first served of those
        tied) goes, so one tenant's flood never pushes out another's turns."""
        tenant = max(self._waiting, key=lambda name: len(self._waiting[name]))
        self._waiting[tenant].popleft()
        self._count -= 1
        if not self._waiting[tenant]:
            del self._waiting[tenant]

    def _next_step(self) -> list[Turn]:
        """Up to `STEP_TURNS` waiting turns, one of each tenant in turn; a tenant served goes to
        the back, so the next step starts with one that waited."""
        step: list[Turn] = []
        while self._waiting and len(step) < STEP_TURNS:
            tenant, turns = next(iter(self._waiting.items()))
            step.append(turns.popleft())
            self._count -= 1
            if turns:
                self._waiting.move_to_end(tenant)
            else:
                del self._waiting[tenant]
        return step

    def drain(self) -> int:
        """Embed every waiting turn that has no vector yet; returns how many were embedded. A
        failure is logged and its turns left to the worker's job: this step is an optimisation."""
        embedded = 0
        while not self._stop.is_set():
            with self._lock:
                step = self._next_step()
            if not step:
                return embedded
            try:
                with deadline.within(Deadline(cancelled=self._stop.is_set)):
                    embedded += arrived.prepare(self._engine, step)
            except Cancelled:
                return embedded
            except Exception as error:  # the model failed: the job embeds these turns
                log.warning("could not embed arriving turns", extra=error_details(error))
        return embedded

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="memory-engine-turn-embedder", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop at the next check (within one embed call); False if still running after `timeout`."""
        self._stop.set()
        self._ready.set()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _run(self) -> None:
        lower_priority(self._nice)
        while not self._stop.is_set():
            self._ready.wait()
            self._ready.clear()
            self.drain()
