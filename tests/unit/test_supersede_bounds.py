"""What marking replaced facts may read per written memory, on both backends: the thread's
statements record and the few memories beside the new statements, however long the thread. A
thread without a record is scanned once, within `thread_statements.SEED_SCANNED`; the LLM's
current facts read the thread's newest memories, as many as facts it is shown."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_engine.engine import Engine
from memory_engine.models.domain import Memory, MemoryFields
from memory_engine.models.life import MemoryLife
from memory_engine.models.statements import ThreadStatements
from memory_engine.usecases import supersede, thread_statements
from tests.fakes.engine import ENGINE_BACKENDS

TENANT = "acme"
THREAD = "thread-long"
START = datetime(2026, 1, 1, tzinfo=UTC)
SCANNED = 6


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setattr(thread_statements, "SEED_SCANNED", SCANNED)
    monkeypatch.setattr(thread_statements, "_PAGE", 4)  # pages that do not divide the bound
    with ENGINE_BACKENDS[request.param]() as engine:
        yield engine


class CountingStore:
    """The engine's store, counting the memories and records its reads hand back."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.listed = 0
        self.got: list[str] = []
        self.records = 0

    def list_thread_memories(self, *args: Any, **kwargs: Any) -> list[Memory]:
        found: list[Memory] = self._inner.list_thread_memories(*args, **kwargs)
        self.listed += len(found)
        return found

    def get_memory(self, tenant: str, memory_id: str) -> Memory | None:
        self.got.append(memory_id)
        found: Memory | None = self._inner.get_memory(tenant, memory_id)
        return found

    def latest_thread_memories(self, tenant: str, thread: str, limit: int) -> list[Memory]:
        found: list[Memory] = self._inner.latest_thread_memories(tenant, thread, limit)
        self.listed += len(found)
        return found

    def get_statements(self, tenant: str, thread: str) -> ThreadStatements | None:
        self.records += 1
        found: ThreadStatements | None = self._inner.get_statements(tenant, thread)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def saved(engine: Engine, number: int, fact: str) -> Memory:
    when = START + timedelta(days=number)
    memory = Memory(
        tenant=TENANT,
        memory_id=f"m{number:03d}",
        session_uuid="",
        parent_session_uuid=THREAD,
        fields=MemoryFields(summary=fact, key_facts=[fact]),
        source_dialog_uuids=[],
        first_seq=0,
        last_seq=0,
        created_at=when,
        life=MemoryLife(valid_from=when),
    )
    assert engine.store.save_memory(memory)
    return memory


def written(engine: Engine, number: int, fact: str) -> Memory:
    """A memory as the worker writes it: saved, then its supersession."""
    memory = saved(engine, number, fact)
    supersede.supersede(engine, memory)
    return memory


@pytest.mark.parametrize("length", [3, 4 * SCANNED])
def test_a_batch_reads_the_statements_record_and_the_memory_it_replaces_however_long_the_thread(
    engine: Engine, length: int
) -> None:
    # Given a thread of `length` memories, each a move of Mina's written by the worker, and one
    # memory of her job between them
    for number in range(length):
        written(engine, number, f"Mina: I moved to city {number}.")
    written(engine, 50, "Mina: I work as a nurse.")
    latest = saved(engine, 99, "Mina: I moved to Seoul.")
    counting = CountingStore(engine.store)

    # When the newest memory's supersession runs
    supersede.supersede(replace(engine, store=counting), latest)

    # Then it read one record and two memories (the move before it, and itself again: not
    # deleted meanwhile), and listed none of the thread
    assert (counting.records, counting.got, counting.listed) == (1, [f"m{length - 1:03d}", "m099"], 0)
    # And that move is marked replaced by the newest
    before = engine.store.get_memory(TENANT, f"m{length - 1:03d}")
    assert before is not None
    assert [fact.superseded_by for fact in before.life.key_facts] == ["m099"]


def test_a_thread_without_a_record_is_scanned_once_within_the_bound(engine: Engine) -> None:
    # Given a thread four times longer than the bound, written before the statements record
    for number in range(4 * SCANNED):
        saved(engine, number, f"Mina: I moved to city {number}.")
    counting = CountingStore(engine.store)
    bounded = replace(engine, store=counting)

    # When two new memories' supersessions run
    supersede.supersede(bounded, saved(engine, 98, "Mina: I moved to Busan."))
    first_listed = counting.listed
    supersede.supersede(bounded, saved(engine, 99, "Mina: I moved to Seoul."))

    # Then the first read at most the bound of the thread's memories to build the record,
    # and the second listed none
    assert 0 < first_listed <= SCANNED
    assert counting.listed == first_listed
    busan = engine.store.get_memory(TENANT, "m098")
    assert busan is not None
    assert [fact.superseded_by for fact in busan.life.key_facts] == ["m099"]


def test_the_llms_current_facts_are_the_newest_of_a_long_thread_read_within_their_number(
    engine: Engine,
) -> None:
    # Given a thread of 24 memories, each a fact of Mina's that still holds
    for number in range(4 * SCANNED):
        saved(engine, number, f"Mina: I have a pet number {number}.")
    counting = CountingStore(engine.store)

    # When the LLM's 5 current facts are gathered
    facts = supersede.current_facts(replace(engine, store=counting), TENANT, THREAD, limit=5)

    # Then they are the newest 5, oldest first, read from 5 memories
    assert [fact.id for fact in facts] == [f"m{number:03d}#0" for number in range(19, 24)]
    assert counting.listed == 5


def test_a_statement_whose_memory_was_deleted_replaces_nothing_and_leaves_the_record(engine: Engine) -> None:
    # Given Mina's March and June moves, written by the worker; then June's memory deleted
    written(engine, 60, "Mina: I live in Busan.")
    written(engine, 150, "Mina: I moved to Tokyo.")
    engine.store.delete_memory(TENANT, "m150")

    # When a May move arrives late (its event time between the two)
    may = saved(engine, 120, "Mina: I moved to Seoul.")
    supersede.supersede(engine, may)

    # Then May's fact still holds (not replaced by the deleted June), March's is replaced by May
    stored_may = engine.store.get_memory(TENANT, "m120")
    march = engine.store.get_memory(TENANT, "m060")
    assert stored_may is not None and march is not None
    assert stored_may.life.key_facts == []
    assert [(f.superseded_by, f.invalid_at) for f in march.life.key_facts] == [("m120", may.stated_at)]
    # And the deleted memory's statement is gone from the thread's record
    record = engine.store.get_statements(TENANT, THREAD)
    assert record is not None
    assert [s.memory_id for s in record.statements] == ["m060", "m120"]
