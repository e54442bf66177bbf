"""What marking replaced facts may read per written memory: at most `supersede.MAX_SCANNED` of the
thread's memories, however long the thread (and the LLM's current facts the same), on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_engine.engine import Engine
from memory_engine.models.domain import Memory, MemoryFields
from memory_engine.models.life import MemoryLife
from memory_engine.usecases import supersede
from tests.fakes.engine import ENGINE_BACKENDS

TENANT = "acme"
THREAD = "thread-long"
START = datetime(2026, 1, 1, tzinfo=UTC)
SCANNED = 6


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setattr(supersede, "MAX_SCANNED", SCANNED)
    monkeypatch.setattr(supersede, "_PAGE", 4)  # pages that do not divide the bound
    with ENGINE_BACKENDS[request.param]() as engine:
        yield engine


class CountingStore:
    """The engine's store, counting the memories its reads hand back."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.read = 0

    def list_thread_memories(self, *args: Any, **kwargs: Any) -> list[Memory]:
        found: list[Memory] = self._inner.list_thread_memories(*args, **kwargs)
        self.read += len(found)
        return found

    def get_memory(self, *args: Any, **kwargs: Any) -> Memory | None:
        found: Memory | None = self._inner.get_memory(*args, **kwargs)
        self.read += found is not None
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


def test_marking_what_a_memory_replaces_reads_a_bounded_share_of_a_long_thread(engine: Engine) -> None:
    # Given a thread four times longer than the bound, every memory a move of Mina's
    for number in range(4 * SCANNED):
        saved(engine, number, f"Mina: I moved to city {number}.")
    latest = saved(engine, 99, "Mina: I moved to Seoul.")
    counting = CountingStore(engine.store)
    bounded = replace(engine, store=counting)

    # When the newest memory's supersession runs, and the LLM's current facts are gathered
    supersede.supersede(bounded, latest)
    after_supersede = counting.read
    facts = supersede.current_facts(bounded, TENANT, THREAD, limit=30)

    # Then each read at most the bound of the thread's memories
    assert after_supersede <= SCANNED
    assert counting.read - after_supersede <= SCANNED
    assert len(facts) <= SCANNED
