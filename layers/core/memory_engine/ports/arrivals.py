"""The arrivals port: told of each turn a consolidate has just buffered, so that a process which
outlives its requests (the local server) can make the turn's vector off the request path; and
the default, which does nothing (a Lambda ends with its request: the worker's job embeds)."""

from __future__ import annotations

from typing import Protocol

from memory_engine.models.domain import Turn


class TurnArrivals(Protocol):
    def buffered(self, turn: Turn) -> None:
        """Called after the turn's write; must return at once and never raise (the turn is stored)."""
        ...


class NoArrivals:
    def buffered(self, turn: Turn) -> None:
        return None
