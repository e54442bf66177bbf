"""How long the work of one request (or one job) may go on, and whether anyone still waits for it.

A `Deadline` is installed for the current context (`within`) by whoever starts the work: every
API function's entry point from its Lambda context (`http.lambda_entry`: the function's remaining
time, which the local server sets from MEMORY_ENGINE_REQUEST_DEADLINE_SECONDS and ties to the
client's socket), the worker Lambda from its own, the local worker from its stop signal. Use
cases and the bounded embedder call `check()` between stages: past the deadline it raises
`DeadlineExceeded` (504), once the caller is gone `Cancelled`, so abandoned work stops at the
next stage instead of burning the cores for minutes. Optional work (embedding buffered turns for
a retrieve) asks `spare()` first and is skipped when the time left is short: the answer then
comes in time with what was found so far. With no deadline installed, nothing ever expires.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from memory_engine.errors import Cancelled, DeadlineExceeded

# Left unspent at the end of a Lambda's time, to answer (and log) before the runtime kills it.
LAMBDA_MARGIN_S = 1.0


class Deadline:
    """`seconds` from now (None: never), plus `cancelled`, asked whether the caller has gone."""

    __slots__ = ("_cancelled", "_clock", "_ends", "seconds")

    def __init__(
        self,
        seconds: float | None = None,
        cancelled: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self._clock = clock
        self._ends = math.inf if seconds is None else clock() + max(0.0, seconds)
        self._cancelled = cancelled

    def remaining(self) -> float:
        """Seconds left (inf without a deadline; never below 0)."""
        return max(0.0, self._ends - self._clock())

    def spare(self, seconds: float) -> bool:
        """Whether at least `seconds` remain and the caller is still there: optional work asks."""
        return self.remaining() >= seconds and not self.cancelled()

    def cancelled(self) -> bool:
        return self._cancelled is not None and self._cancelled()

    def check(self) -> None:
        """Raise `Cancelled` when the caller is gone, `DeadlineExceeded` past the deadline."""
        if self.cancelled():
            raise Cancelled("The work was stopped: its client went away or the server is stopping.")
        if self._clock() >= self._ends:
            raise DeadlineExceeded(
                f"The request did not finish within its {self.seconds:g} s deadline and was stopped: "
                "send less at once (fewer or shorter texts), or retry."
            )


_NONE = Deadline()
_current: ContextVar[Deadline] = ContextVar("memory_engine_deadline", default=_NONE)


def current() -> Deadline:
    """The deadline of the work in this context (one that never expires when none is installed)."""
    return _current.get()


def check() -> None:
    """`current().check()`: called between the stages of a use case."""
    _current.get().check()


@contextmanager
def within(deadline: Deadline) -> Iterator[Deadline]:
    """Run the block under `deadline` (nested blocks restore the outer one when they end)."""
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)


def of_context(context: Any, margin_s: float = LAMBDA_MARGIN_S) -> Deadline:
    """The deadline of a Lambda invocation: its remaining time less `margin_s`, and the local
    server's cancellation (`cancelled()` on its context: the client closed the connection, or the
    server is stopping). A context without remaining time gives no deadline."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    seconds = max(0.0, remaining() / 1000 - margin_s) if callable(remaining) else None
    cancelled = getattr(context, "cancelled", None)
    return Deadline(seconds, cancelled if callable(cancelled) else None)
