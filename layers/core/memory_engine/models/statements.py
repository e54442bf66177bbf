"""A thread's statements record: every key fact of the thread that states a one-value fact.

Supersession (`usecases/supersede.py`) reads this one record, not the thread's memories, to find
the statements a new memory's key facts replace: its size is bounded (`MAX_STATEMENTS`), so the
work of a batch does not grow with the thread. It holds where each statement is (memory id, key
fact index), its slot, character and event time — never the fact's words.

Written with a compare-and-set on `version` (`Store.save_statements`), so two workers of one
thread adding statements at once both keep theirs: the later one sees the earlier's.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import ConfigDict, Field

from memory_engine.models.base import Model

# Statements kept per thread. Past it, replaced statements go first (oldest first): they are
# history already, marked in their memories; a current statement goes only when a thread states
# more than this many distinct (slot, character) facts.
MAX_STATEMENTS = 1_000


class StatementRef(Model):
    """One key fact (`fields.key_facts[index]` of memory `memory_id`) stating `slot` of `subject`."""

    model_config = ConfigDict(frozen=True)

    memory_id: str
    index: int = Field(ge=0)
    slot: str
    subject: str = ""
    stated_at: datetime

    @property
    def group(self) -> tuple[str, str]:
        """What replaces what: statements of one slot and one character."""
        return self.slot, self.subject

    @property
    def order(self) -> tuple[datetime, str, int]:
        """Event time, then memory id and position: the same order on every reader."""
        return self.stated_at, self.memory_id, self.index


class ThreadStatements(Model):
    """The thread's statements, event-time ordered, and the record's version (0: never stored)."""

    tenant: str
    thread: str
    version: int = Field(0, ge=0)
    statements: list[StatementRef] = Field(default_factory=list)

    def added(self, new: list[StatementRef]) -> ThreadStatements:
        """This record with `new` added (those not in it yet), ordered and bounded."""
        known = {(s.memory_id, s.index) for s in self.statements}
        fresh = [s for s in new if (s.memory_id, s.index) not in known]
        return self.model_copy(
            update={"statements": _bounded(sorted([*self.statements, *fresh], key=_order))}
        )

    def without(self, gone: set[tuple[str, int]]) -> ThreadStatements:
        """This record less the statements at `gone` ((memory id, index)): found no longer stated."""
        kept = [s for s in self.statements if (s.memory_id, s.index) not in gone]
        return self.model_copy(update={"statements": kept})


def _order(statement: StatementRef) -> tuple[datetime, str, int]:
    return statement.order


def _bounded(ordered: list[StatementRef]) -> list[StatementRef]:
    if len(ordered) <= MAX_STATEMENTS:
        return ordered
    latest: dict[tuple[str, str], StatementRef] = {}
    for statement in ordered:
        latest[statement.group] = statement
    current = set(latest.values())
    replaced = [s for s in ordered if s not in current]
    excess = len(ordered) - MAX_STATEMENTS
    dropped = set(replaced[:excess])
    if len(dropped) < excess:  # more distinct facts than the record holds: the oldest go
        dropped |= set([s for s in ordered if s in current][: excess - len(dropped)])
    return [s for s in ordered if s not in dropped]
