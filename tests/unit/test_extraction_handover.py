"""No turn is unfindable between being acknowledged and its memory being searchable: a job
indexes a memory before the store takes its turns out of the buffer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.models.domain import Memory
from memory_engine.ports import Store
from memory_engine.usecases import consolidate, retrieve
from tests.fakes.engine import ENGINE_BACKENDS, run_worker

TENANT, THREAD = "acme", "thread-1"
FACT = "My tortoise Sheldon loves strawberries"
QUESTION = "does the tortoise Sheldon love strawberries?"


class WatchedStore:
    """The engine's store, asking `probe` just before and just after each memory is written."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.probe: Any = None
        self.seen: list[tuple[str, bool]] = []

    def save_memory(self, memory: Memory) -> bool:
        self.seen.append(("before", self.probe()))
        saved = self._inner.save_memory(memory)
        self.seen.append(("after", self.probe()))
        return saved

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as built:
        yield built


def found(engine: Engine) -> bool:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": [THREAD], "user_input": {"query": QUESTION}, "options": {"limit": 50}}
    )
    return any("d3" in hit.source_dialog_uuids for hit in retrieve.run(engine, TENANT, request).data)


def test_a_turn_stays_findable_while_its_memory_is_written_and_indexed(engine: Engine) -> None:
    # Given 20 buffered turns (a job queued), d3 holding a fact, and a store that asks retrieve
    # for the fact just before and just after each memory is written
    watched = WatchedStore(engine.store)
    engine = replace(engine, store=watched)  # type: ignore[arg-type]
    watched.probe = lambda: found(engine)
    for n in range(1, 21):
        text = FACT if n == 3 else f"Filler remark number {n} about the weather"
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": THREAD,
            "new_dialog": {"uuid": f"d{n}", "query": text, "answer": ""},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))
    assert found(engine)

    # When the worker extracts the batches
    run_worker(engine)

    # Then the fact was found at every step: as a buffered turn, then as its memory's turn
    assert watched.seen and all(ok for _, ok in watched.seen), watched.seen
    assert found(engine)


class RefusingStore(WatchedStore):
    """A store on which another run has already claimed the first batch's turns: it refuses the
    first memory, then writes as usual."""

    def save_memory(self, memory: Memory) -> bool:
        if not self.seen:
            self.seen.append((memory.memory_id, False))
            return False
        return bool(self._inner.save_memory(memory))


def test_a_memory_the_store_refuses_leaves_no_documents_in_the_index(engine: Engine) -> None:
    # Given 20 buffered turns (a job queued) and a store that refuses the job's first memory
    refusing = RefusingStore(engine.store)
    engine = replace(engine, store=refusing)  # type: ignore[arg-type]
    for n in range(1, 21):
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": THREAD,
            "new_dialog": {"uuid": f"d{n}", "query": f"Remark number {n}", "answer": ""},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))

    # When the worker runs the job: the first memory is indexed, then refused by the store
    run_worker(engine)

    # Then the index holds exactly the memories the store wrote, not the refused one
    [(refused, _)] = refusing.seen
    index = engine.index
    assert isinstance(index, LocalSearchIndex)
    stored = {memory.memory_id for memory in engine.store.iter_memories()}
    assert stored and refused not in stored
    assert index.memory_ids().get(TENANT, set()) == stored


class Killed(BaseException):
    """The worker's process ending mid-job (not an error the job's code handles)."""


class KilledStore(WatchedStore):
    """A store whose worker is killed at its first memory write: after the index write, before
    the store's."""

    def save_memory(self, memory: Memory) -> bool:
        if not self.seen:
            self.seen.append((memory.memory_id, False))
            raise Killed
        return bool(self._inner.save_memory(memory))


def test_a_memory_indexed_by_a_killed_worker_is_never_returned_and_its_turns_stay_findable(
    engine: Engine,
) -> None:
    # Given 20 buffered turns (a job queued), d3 holding a fact, and a worker killed between its
    # first memory's index write and the store's
    killed = KilledStore(engine.store)
    engine = replace(engine, store=killed)  # type: ignore[arg-type]
    for n in range(1, 21):
        text = FACT if n == 3 else f"Filler remark number {n} about the weather"
        said = {
            "session_uuid": "s1",
            "parent_session_uuid": THREAD,
            "new_dialog": {"uuid": f"d{n}", "query": text, "answer": ""},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(said))
    with pytest.raises(Killed):
        run_worker(engine)
    [(stale, _)] = killed.seen
    index = engine.index
    assert isinstance(index, LocalSearchIndex)
    assert stale in index.memory_ids().get(TENANT, set())  # the index entry its memory never got

    # When the fact is asked for
    asked = RetrieveRequest.model_validate(
        {"parent_session_uuids": [THREAD], "user_input": {"query": QUESTION}, "options": {"limit": 50}}
    )
    hits = retrieve.run(engine, TENANT, asked).data

    # Then the stale entry is not a hit, and the fact is found as the buffered turn it still is
    assert stale not in {hit.memory_id for hit in hits}
    assert any(hit.kind == "dialog" and hit.source_dialog_uuids == ["d3"] for hit in hits)
