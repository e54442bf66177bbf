"""The one compare-and-set loop of the use cases: a record other writers change too (a memory's
life, a thread's statements record) is read, changed and written only over what was read (its life
or version); when another writer got there first, it is read again and the change made over that.

`compare_and_set` owns the rounds and their limit; each caller says what one round does
(`attempt`) and what happens when every round lost (`gave_up`: raise, or log and go on), so the
choice is made, and read, at the call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from memory_engine.engine import Engine
from memory_engine.models.domain import Memory

# Rounds of one compare-and-set: each lost round means another writer (a PATCH, another merge, a
# worker of the same thread) changed the record since it was read, so a handful covers any real
# contention.
MAX_ATTEMPTS = 8

S = TypeVar("S")
R = TypeVar("R")


@dataclass(frozen=True)
class Lost(Generic[S]):
    """A round lost: its write was refused, the record changed since it was read. `fresh` is the
    record read again, what the next round changes."""

    fresh: S


def compare_and_set(read: S, attempt: Callable[[S], R | Lost[S]], *, gave_up: Callable[[S], R]) -> R:
    """What `attempt` returns for the record as `read`, or, while it loses (`Lost`), for the record
    it read again: at most MAX_ATTEMPTS rounds. When every one lost, what `gave_up` makes of the
    record last read (it may raise)."""
    for _ in range(MAX_ATTEMPTS):
        outcome = attempt(read)
        if not isinstance(outcome, Lost):
            return outcome
        read = outcome.fresh
    return gave_up(read)


def read_again(engine: Engine, memory: Memory, gone: R) -> R | Lost[Memory]:
    """After a refused write over `memory`: the memory as stored now, for the next round, or
    `gone` (the round's result) when it was deleted meanwhile."""
    fresh = engine.store.get_memory(memory.tenant, memory.memory_id)
    return gone if fresh is None else Lost(fresh)
