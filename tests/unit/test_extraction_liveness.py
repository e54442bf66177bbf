"""No buffered batch waits forever: turns that arrive while a job runs, thresholds below the batch
size, and retries of a job that failed half-way all lead to extraction."""

from __future__ import annotations

from collections.abc import Sequence

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.domain import Turn
from memory_engine.models.game import RecordMemoryRequest
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import Extraction, ExtractionContext
from memory_engine.usecases import consolidate, extract, game_record_memory
from tests.fakes.engine import fake_engine, run_worker
from tests.fakes.ports import EchoExtractor, ListQueue

TENANT, SESSION = "acme", "s1"


def say(engine: Engine, n: int) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": SESSION,
            "parent_session_uuid": "t1",
            "new_dialog": {"uuid": f"d{n:03d}", "query": f"turn {n}"},
        }
    )
    consolidate.run(engine, TENANT, request)


def queued(engine: Engine) -> list[ExtractionJob]:
    assert isinstance(engine.queue, ListQueue)
    return list(engine.queue.jobs)


class BusyWhileExtracting(EchoExtractor):
    """While the first batch is being extracted, the user keeps talking (20 more turns)."""

    def __init__(self, engine_ref: list[Engine]) -> None:
        super().__init__()
        self._engine_ref = engine_ref

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        if not self.batches:
            for n in range(100, 120):
                say(self._engine_ref[0], n)
        return super().extract(turns, context)


def test_turns_that_arrive_during_an_extraction_get_a_job_of_their_own() -> None:
    ref: list[Engine] = []
    # A budget no loaded host reaches: the job takes both its batches (it is not what is tested).
    engine = fake_engine(worker_job_seconds=3600.0)
    engine.extractor = BusyWhileExtracting(ref)
    ref.append(engine)
    for n in range(20):
        say(engine, n)
    [job] = engine.queue.pop_all()  # type: ignore[attr-defined]

    extract.run(engine, job)

    assert queued(engine) == [ExtractionJob(tenant=TENANT, session_uuid=SESSION)]
    run_worker(engine)
    assert len(engine.store.buffered_turns(TENANT, SESSION)) < 20


def test_a_threshold_below_the_batch_size_queues_when_a_whole_batch_is_buffered() -> None:
    engine = fake_engine(extraction_threshold=5, batch_size=8)
    for n in range(7):
        say(engine, n)
    assert queued(engine) == []

    say(engine, 7)
    written = run_worker(engine)

    assert [len(memory.source_dialog_uuids) for memory in written] == [8]


def test_a_redelivered_job_takes_every_complete_batch_its_failed_run_left() -> None:
    engine = fake_engine()
    for n in range(20):
        say(engine, n)
    job = engine.queue.pop_all()[0]  # type: ignore[attr-defined]
    batch = engine.store.buffered_turns(TENANT, SESSION)[:8]
    first = extract._extract_one(engine, engine.store.get_session(TENANT, SESSION), batch, {})  # type: ignore[arg-type]
    engine.store.save_memory(first)  # the failed run got this far

    written = extract.run(engine, job, redelivered=True)

    assert [memory.source_dialog_uuids[0] for memory in written] == ["d008"]
    assert len(engine.store.buffered_turns(TENANT, SESSION)) == 4


def test_a_first_delivery_below_the_threshold_extracts_nothing() -> None:
    engine = fake_engine()
    for n in range(12):
        say(engine, n)

    assert extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid=SESSION)) == []


def test_recorded_chats_with_a_threshold_below_the_batch_size_queue_once_a_whole_batch_is_buffered() -> None:
    # Given a threshold of 5 below batches of 8, and a session of one consolidated turn
    engine = fake_engine(extraction_threshold=5, batch_size=8)
    say(engine, 0)

    def record(*numbers: int) -> None:
        chats = [{"npc_id": "npc-guard", "message": f"chat {n}", "uuid": f"c{n}"} for n in numbers]
        game_record_memory.run(
            engine, TENANT, RecordMemoryRequest.model_validate({"session_id": SESSION, "chats": chats})
        )

    # When chats bring it to 5 buffered turns, nothing is queued (no whole batch to cut yet)
    record(1, 2, 3, 4)
    assert queued(engine) == []

    # Then the chats that make a whole batch queue the job, and extraction takes all 8
    record(5, 6, 7)
    assert [len(memory.source_dialog_uuids) for memory in run_worker(engine)] == [8]
