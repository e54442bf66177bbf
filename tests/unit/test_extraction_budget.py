"""An extraction job works within a budget (time, characters embedded, a Lambda's time left), then
leaves the batches it has not taken to a job of its own, queued behind the others: one session's
long texts cannot hold up another's extraction, and no job outlives its function's timeout."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from memory_engine import deadline
from memory_engine.deadline import Deadline
from memory_engine.engine import Engine
from memory_engine.extraction.budget import JobBudget
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import EmbedMode
from memory_engine.usecases import consolidate, extract
from tests.fakes.engine import fake_engine, run_worker
from tests.fakes.ports import HashEmbedder, ListQueue
from tests.fakes.stack import local_stack

TENANT = "acme"
IN_LAMBDA: dict[str, object] = {"AWS_LAMBDA_FUNCTION_NAME": "memory-engine-worker"}


def say(engine: Engine, session: str, count: int, force_last: bool = False, tenant: str = TENANT) -> None:
    for n in range(count):
        request = {
            "session_uuid": session,
            "parent_session_uuid": f"thread-{session}",
            "new_dialog": {"uuid": f"{session}-{n:03d}", "query": f"turn {n} of {session}"},
            "options": {"force_summary": force_last and n == count - 1},
        }
        consolidate.run(engine, tenant, ConsolidateRequest.model_validate(request))


def jobs(engine: Engine) -> list[ExtractionJob]:
    assert isinstance(engine.queue, ListQueue)
    return [job for job in engine.queue.pop_all() if isinstance(job, ExtractionJob)]


def batches(engine: Engine, session: str, tenant: str = TENANT) -> list[list[str]]:
    memories = sorted(engine.store.list_memories(tenant, session), key=lambda memory: memory.first_seq)
    return [memory.source_dialog_uuids for memory in memories]


def test_a_job_past_its_time_leaves_the_batches_it_did_not_take_to_a_job_of_its_own() -> None:
    # Given 40 buffered turns (5 batches) and jobs that may run no time at all
    engine = fake_engine(worker_job_seconds=1e-9, extraction_threshold=1000)
    say(engine, "s1", 40, force_last=True)
    [job] = jobs(engine)

    # When the job runs
    written = extract.run(engine, job)

    # Then it wrote its first batch and queued the rest, up to the turn it would have taken last
    assert [memory.source_dialog_uuids for memory in written] == [[f"s1-{n:03d}" for n in range(8)]]
    [rest] = jobs(engine)
    last_seq = max(turn.seq for turn in engine.store.list_turns(TENANT, "s1"))
    assert rest == ExtractionJob(tenant=TENANT, session_uuid="s1", force=True, through_seq=last_seq)


def test_the_continuations_extract_every_batch_in_order() -> None:
    engine = fake_engine(worker_job_seconds=1e-9, extraction_threshold=1000)
    say(engine, "s1", 40, force_last=True)

    run_worker(engine)

    assert batches(engine, "s1") == [
        [f"s1-{n:03d}" for n in range(start, start + 8)] for start in range(0, 40, 8)
    ]
    assert engine.store.buffered_turns(TENANT, "s1") == []


def test_a_continuation_takes_only_what_its_job_left_not_turns_said_since() -> None:
    # Given a job that found 24 turns (3 batches), took one and left two
    engine = fake_engine(worker_job_seconds=1e-9, extraction_threshold=20)
    say(engine, "s1", 24)
    extract.run(engine, jobs(engine)[0])
    [rest] = jobs(engine)

    # When 4 more turns arrive before the continuation runs
    for n in range(24, 28):
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-s1",
            "new_dialog": {"uuid": f"s1-{n:03d}", "query": "later"},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))
    engine.limits = replace(engine.limits, job_seconds=600.0)
    extract.run(engine, rest)

    # Then it took the batches left (through the job's last turn), and the newer turns stay buffered
    assert batches(engine, "s1") == [[f"s1-{n:03d}" for n in range(start, start + 8)] for start in (0, 8, 16)]
    assert [turn.dialog_uuid for turn in engine.store.buffered_turns(TENANT, "s1")] == [
        f"s1-{n:03d}" for n in range(24, 28)
    ]


def test_a_job_past_its_characters_leaves_the_rest_too() -> None:
    # Given a job that may embed 10,000 characters, and turns of about 1,000
    engine = fake_engine(extraction_job_max_chars=10_000)
    for n in range(24):
        text = f"turn {n} " + "about the old mill by the river " * 32
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "t",
            "new_dialog": {"uuid": f"d{n:02d}", "query": text},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))
    [job] = jobs(engine)

    # When the job runs
    written = extract.run(engine, job)

    # Then it stopped after its first batch and queued the rest
    assert len(written) == 1
    assert [queued.through_seq is not None for queued in jobs(engine)] == [True]


def long_turns(engine: Engine, session: str, count: int) -> None:
    for n in range(count):
        request = {
            "session_uuid": session,
            "parent_session_uuid": f"thread-{session}",
            "new_dialog": {"uuid": f"{session}-{n:03d}", "query": f"turn {n} " + "of the long tale " * 400},
            "options": {"force_summary": n == count - 1},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))


def test_a_job_past_its_time_embeds_part_of_its_first_batch_and_leaves_the_rest() -> None:
    # Given one batch of 8 long turns (each embedded as its capped 2,048 characters: two per
    # chunk) and a job that may run no time at all
    engine = fake_engine(worker_job_seconds=1e-9, extraction_threshold=1000)
    long_turns(engine, "s1", 8)
    [job] = jobs(engine)

    # When the job runs
    written = extract.run(engine, job)

    # Then it embedded one chunk (stored with the turns), wrote no memory, and queued the rest
    assert written == []
    embedded = [turn.embedding is not None for turn in engine.store.list_turns(TENANT, "s1")]
    assert embedded == [True, True] + [False] * 6
    [rest] = jobs(engine)
    assert rest.through_seq is not None


def test_the_continuations_of_a_long_first_batch_write_its_memory() -> None:
    engine = fake_engine(worker_job_seconds=1e-9, extraction_threshold=1000)
    long_turns(engine, "s1", 8)

    run_worker(engine)

    assert batches(engine, "s1") == [[f"s1-{n:03d}" for n in range(8)]]
    assert engine.store.buffered_turns(TENANT, "s1") == []


class Recording(HashEmbedder):
    """Notes which session's turns each passage call embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        self.order.extend(text.split(" of ")[-1].split()[0] for text in texts if " of " in text)
        return super().embed(texts, mode)


def test_another_tenants_job_runs_between_the_batches_of_a_heavy_one(tmp_path: Path) -> None:
    # Given a heavy session's job (5 batches) queued before a light one's (1 batch), one worker
    with local_stack(tmp_path, worker_job_seconds=1e-9, extraction_threshold=8) as stack:
        say(stack.engine, "heavy", 40, tenant="a")
        say(stack.engine, "light", 8, tenant="b")

        # When the worker runs the queue
        stack.drain()

        # Then the light session's memory was written after the heavy job's first batch, not after all 5
        order = sorted(
            [
                *stack.engine.store.list_memories("a", "heavy"),
                *stack.engine.store.list_memories("b", "light"),
            ],
            key=lambda memory: memory.created_at,
        )
        sessions = [memory.session_uuid for memory in order]
        assert sessions.index("light") == 1
        assert len(sessions) == 6
        assert batches(stack.engine, "heavy", "a") == [
            [f"heavy-{n:03d}" for n in range(start, start + 8)] for start in range(0, 40, 8)
        ]


@pytest.mark.parametrize(("remaining", "batches_taken"), [(5.0, 1), (600.0, 5)])
def test_in_a_lambda_a_job_stops_while_the_time_left_still_holds_two_batches(
    remaining: float, batches_taken: int
) -> None:
    # Given a job of 5 batches in a Lambda with `remaining` seconds left
    engine = fake_engine(**IN_LAMBDA, extraction_threshold=1000)
    say(engine, "s1", 40, force_last=True)
    [job] = jobs(engine)

    # When it runs
    with deadline.within(Deadline(remaining)):
        written = extract.run(engine, job)

    # Then with 5 s (less than two batches and the reserve) it took one and queued the rest;
    # with 600 s, all five
    assert len(written) == batches_taken
    assert len(jobs(engine)) == (1 if batches_taken < 5 else 0)


def test_the_local_time_budget_does_not_apply_in_a_lambda() -> None:
    limits = fake_engine(**IN_LAMBDA, worker_job_seconds=1.0).limits

    assert JobBudget.of(limits).max_seconds == float("inf")


def test_a_budget_never_stops_a_job_before_its_first_batch() -> None:
    budget = JobBudget(max_seconds=0.0, max_chars=0)

    assert budget.over()
    assert not budget.exhausted()
