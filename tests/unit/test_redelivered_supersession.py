"""Issue #45: a job whose memory was written but whose supersession never ran (the worker died
between the store write and the thread's statements record) is delivered again, and the
redelivery finishes the supersession: the memory's statements join the record, it replaces the
fact it updates, and a later statement of its slot replaces it. Both store backends, English and
Korean."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.domain import Memory
from memory_engine.models.messages import ExtractionJob
from memory_engine.usecases import consolidate, extract, supersede
from tests.fakes.engine import run_worker
from tests.unit.test_removed_facts import marks, recorded, say
from tests.unit.test_thread_fact_life import MARCH, TENANT, THREAD

DAY = timedelta(days=1)


class Died(Exception):
    """The worker stopped after the store write, before supersession."""


@pytest.fixture(autouse=True)
def builtin(engine: Engine) -> None:
    engine.extractor = BuiltinExtractor()


def written_but_not_superseded(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, session: str, query: str, when: object
) -> ExtractionJob:
    """Consolidate `query` and run its job until it dies right after the memory's store write."""
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": THREAD,
            "user_name": "Mina",
            "new_dialog": {"uuid": f"{session}-d1", "query": query, "answer": "Nice.", "timestamp": when},
            "options": {"force_summary": True},
        }
    )
    consolidate.run(engine, TENANT, request)
    job = ExtractionJob(tenant=TENANT, session_uuid=session, force=True)

    def die(engine: Engine, memory: Memory) -> list[Memory]:
        raise Died

    with monkeypatch.context() as patch:
        patch.setattr(supersede, "supersede", die)
        with pytest.raises(Died):
            extract.run(engine, job)
    return job


def only_memory(engine: Engine, session: str) -> Memory:
    [memory] = engine.store.list_memories(TENANT, session)
    return memory


@pytest.mark.parametrize(
    ("before", "after", "later"),
    [
        ("I live in Seoul.", "I moved to Busan.", "I moved to Daegu."),
        ("나는 부산에 살아.", "지난주에 서울로 이사했어.", "어제 대구로 이사했어."),
    ],
    ids=["en", "ko"],
)
def test_a_redelivered_job_finishes_the_supersession_its_dead_run_left(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, before: str, after: str, later: str
) -> None:
    # Given Mina's first home, and a move whose job died after its memory was stored
    first = say(engine, "s1", before, MARCH)
    job = written_but_not_superseded(engine, monkeypatch, "s2", after, MARCH + DAY)
    moved = only_memory(engine, "s2")
    assert moved.memory_id not in recorded(engine)
    assert marks(engine, first) == []

    # When the job is delivered again
    extract.run(engine, job, redelivered=True)
    run_worker(engine)  # the queue's own copy of the job: nothing left to do

    # Then the move joins the record and replaces the first home
    assert moved.memory_id in recorded(engine)
    assert marks(engine, first) == [(moved.memory_id, moved.stated_at)]

    # And a later move replaces the orphaned one
    third = say(engine, "s3", later, MARCH + 2 * DAY)
    assert marks(engine, moved) == [(third.memory_id, third.stated_at)]
    assert marks(engine, first) == [(moved.memory_id, moved.stated_at)]


def test_a_redelivered_job_whose_supersession_had_run_changes_nothing(engine: Engine) -> None:
    # Given a move whose job finished
    first = say(engine, "s1", "I live in Seoul.", MARCH)
    moved = say(engine, "s2", "I moved to Busan.", MARCH + DAY)
    before = (recorded(engine), marks(engine, first), marks(engine, moved))

    # When the job is delivered again
    extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid="s2"), redelivered=True)

    # Then the record and the marks are as they were
    assert (recorded(engine), marks(engine, first), marks(engine, moved)) == before
