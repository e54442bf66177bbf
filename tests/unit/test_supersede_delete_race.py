"""Issue #45: a memory deleted while the worker that wrote it is still marking what it replaces
(the delete between the store write and supersession) leaves no mark naming it: the fact it
would have replaced holds, and the thread's record does not list it. Both store backends,
English and Korean."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import ConsolidateRequest, DeleteRequest
from memory_engine.models.domain import Memory
from memory_engine.usecases import consolidate, delete, supersede
from tests.fakes.engine import run_worker
from tests.unit.test_removed_facts import MOVES, marks, recorded, say
from tests.unit.test_thread_fact_life import MARCH, TENANT, THREAD

DAY = timedelta(days=1)


@pytest.fixture(autouse=True)
def builtin(engine: Engine) -> None:
    engine.extractor = BuiltinExtractor()


@MOVES
def test_a_memory_deleted_before_its_worker_marks_what_it_replaces_leaves_no_mark(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, before: str, after: str
) -> None:
    # Given Mina's first home, and a worker about to mark what her move replaces
    first = say(engine, "s1", before, MARCH)
    marking = supersede.supersede
    deleted: list[str] = []

    def deleted_first(engine: Engine, memory: Memory) -> list[Memory]:
        # When the move's memory is deleted by id just before the worker marks
        delete.run(
            engine, TENANT, DeleteRequest(session_uuid=memory.session_uuid, dialog_uuid=memory.memory_id)
        )
        deleted.append(memory.memory_id)
        return marking(engine, memory)

    monkeypatch.setattr(supersede, "supersede", deleted_first)
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s2",
            "parent_session_uuid": THREAD,
            "user_name": "Mina",
            "new_dialog": {"uuid": "s2-d1", "query": after, "answer": "Nice.", "timestamp": MARCH + DAY},
            "options": {"force_summary": True},
        }
    )
    consolidate.run(engine, TENANT, request)
    run_worker(engine)

    # Then the first home holds, and the record lists only it
    assert deleted and engine.store.get_memory(TENANT, deleted[0]) is None
    assert marks(engine, first) == []
    assert recorded(engine) == {first.memory_id}
