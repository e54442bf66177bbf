"""The thread's statements record (`models.statements`): read, added to and pruned with a
compare-and-set, so supersession reads one record per batch instead of the thread's memories.

A thread written before the record existed (or a fork's or an import's new thread) has none: the
first batch that needs it builds it from one bounded scan of the thread's memories, the way
supersession read them before, and every later batch reads the record alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from memory_engine.engine import Engine
from memory_engine.extraction.fact_subjects import stated
from memory_engine.models.domain import Memory
from memory_engine.models.statements import StatementRef, ThreadStatements
from memory_engine.usecases.compare_and_set import Lost, compare_and_set

log = logging.getLogger("memory_engine.worker")

# A thread without a record is read once to build it: its first SEED_SCANNED memories, oldest id
# first (bounded work, as supersession read a thread before the record).
SEED_SCANNED = 500
_PAGE = 100
# Memories read per batch, beyond the batch's own, to check that the statements next to the new
# ones still stand (and to mark them): a few per new statement, whatever the thread holds.
MAX_NEIGHBOUR_READS = 32


def statements(memory: Memory) -> list[StatementRef]:
    """The memory's key facts that state a one-value fact, with their character: a speaker's line
    ("Mina: I moved to Seoul.") or a fact about one of the memory's characters ("Mina moved to
    Seoul.", as an LLM writes it; `extraction.fact_subjects`)."""
    found: list[StatementRef] = []
    for index, line in enumerate(memory.fields.key_facts):
        read = stated(line, memory.fields.characters)
        if read is not None:
            slot, subject = read
            found.append(
                StatementRef(
                    memory_id=memory.memory_id,
                    index=index,
                    slot=slot,
                    subject=subject,
                    stated_at=memory.stated_at,
                )
            )
    return found


def add(engine: Engine, tenant: str, thread: str, new: list[StatementRef]) -> ThreadStatements:
    """The thread's record with `new` in it, stored: what every statement of the thread that was
    added before this one returns is in it too (the compare-and-set orders the writers)."""

    def read() -> ThreadStatements:
        return engine.store.get_statements(tenant, thread) or _seeded(engine, tenant, thread)

    def attempt(record: ThreadStatements) -> ThreadStatements | Lost[ThreadStatements]:
        updated = record.added(new)
        if record.version and updated.statements == record.statements:
            return record  # already recorded (a retried job, or the seed scan found them)
        if engine.store.save_statements(updated):
            return updated.model_copy(update={"version": record.version + 1})
        return Lost(read())

    def gave_up(record: ThreadStatements) -> ThreadStatements:
        # Never seen outside a test: supersession goes on with what it read (these statements
        # still replace their predecessors), but they stay out of the record, so a later statement
        # of their slot would not replace them: logged to be seen.
        log.warning(
            "the statements record of thread %s kept changing; %d statements left out", thread, len(new)
        )
        return record.added(new)

    return compare_and_set(read(), attempt, gave_up=gave_up)


def prune(engine: Engine, record: ThreadStatements, gone: set[tuple[str, int]]) -> None:
    """Take statements found no longer stated (their memory deleted or its key fact corrected)
    out of the record; one try: a lost race leaves them for the next batch to find again."""
    if gone and record.version:
        engine.store.save_statements(record.without(gone))


def withdraw(engine: Engine, tenant: str, thread: str, gone: set[tuple[str, int]]) -> None:
    """Take the statements at `gone` ((memory id, index)) out of the thread's record now: their
    key facts were corrected to state something else, which takes their place (`add`). Retried
    like `add`; a thread without a record has nothing to take out (its seed scan reads the
    memories as they are)."""

    def attempt(_: None) -> Lost[None] | None:
        # The record is read at the start of each round (not again after the last lost one), so
        # the rounds carry nothing from one to the next.
        record = engine.store.get_statements(tenant, thread)
        if record is None or not gone & {(s.memory_id, s.index) for s in record.statements}:
            return None
        if engine.store.save_statements(record.without(gone)):
            return None
        return Lost(None)

    def gave_up(_: None) -> None:
        log.warning(
            "the statements record of thread %s kept changing; %d statements left in", thread, len(gone)
        )

    compare_and_set(None, attempt, gave_up=gave_up)


def _seeded(engine: Engine, tenant: str, thread: str) -> ThreadStatements:
    found = [statement for memory in _scanned(engine, tenant, thread) for statement in statements(memory)]
    return ThreadStatements(tenant=tenant, thread=thread).added(found)


def _scanned(engine: Engine, tenant: str, thread: str) -> Iterator[Memory]:
    after: str | None = None
    seen = 0
    while seen < SEED_SCANNED:
        page = engine.store.list_thread_memories(tenant, thread, after, min(_PAGE, SEED_SCANNED - seen))
        if not page:
            return
        yield from page
        seen += len(page)
        after = page[-1].memory_id


class Neighbours:
    """The pairs of consecutive statements (event time) of a group that take in one of the
    `written` memories', reading only the memories on either side: a recorded statement whose
    memory is gone, or whose key fact no longer states it (corrected), is passed over for the next
    one and noted in `gone`. At most MAX_NEIGHBOUR_READS memories are read beyond `written`."""

    def __init__(self, engine: Engine, written: Sequence[Memory]) -> None:
        self._engine = engine
        self._tenant, self._thread = written[0].tenant, written[0].parent_session_uuid
        self._mine = {(s.memory_id, s.index) for memory in written for s in statements(memory)}
        self.read: dict[str, Memory | None] = {memory.memory_id: memory for memory in written}
        self._budget = len(self.read) + MAX_NEIGHBOUR_READS
        self.gone: set[tuple[str, int]] = set()

    def pairs(self, ordered: list[StatementRef]) -> list[tuple[StatementRef, StatementRef]]:
        """Each statement of `ordered` (one group, event-time order) with the next of another memory
        (`_successions`), the pairs with a written statement."""
        while True:
            pairs = [
                (a, b) for a, b in _successions(ordered) if _key(a) in self._mine or _key(b) in self._mine
            ]
            holding = {_key(s): self._holds(s) for pair in pairs for s in pair}
            stale = {key for key, holds in holding.items() if holds is False}
            if not stale:
                # A neighbour left unread (the read budget spent) marks nothing and is kept.
                return [(a, b) for a, b in pairs if holding[_key(a)] and holding[_key(b)]]
            self.gone |= stale
            ordered = [s for s in ordered if _key(s) not in stale]

    def _holds(self, statement: StatementRef) -> bool | None:
        """Whether the statement still stands in its memory (None: not read, the budget spent)."""
        if _key(statement) in self._mine:
            return True
        if statement.memory_id not in self.read:
            if len(self.read) >= self._budget:
                return None
            self.read[statement.memory_id] = self._engine.store.get_memory(self._tenant, statement.memory_id)
        owner = self.read[statement.memory_id]
        if owner is None or owner.parent_session_uuid != self._thread:
            return False
        return statement in statements(owner)


def _successions(ordered: list[StatementRef]) -> list[tuple[StatementRef, StatementRef]]:
    """Each statement with the next one of another memory (event-time order): a memory stating
    both values holds the later one itself, and marking its own fact would make it read as
    replaced by itself."""
    out: list[tuple[StatementRef, StatementRef]] = []
    for position, earlier in enumerate(ordered):
        later = next((s for s in ordered[position + 1 :] if s.memory_id != earlier.memory_id), None)
        if later is not None:
            out.append((earlier, later))
    return out


def _key(statement: StatementRef) -> tuple[str, int]:
    return statement.memory_id, statement.index
