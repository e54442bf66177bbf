"""Retry delays, when a turn queues a job again, and how a failed job is settled."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.errors import Unavailable
from memory_engine.extraction.batching import job_due
from memory_engine.models.messages import ChatMemoryJob, ExtractionJob, Job
from memory_engine.models.queue import ReceivedJob
from memory_engine.usecases import jobs
from memory_engine.usecases.jobs import RetryPolicy
from tests.fakes.engine import fake_engine
from tests.fakes.ports import RecordingJobSource

JOB = ExtractionJob(tenant="tenant-a", session_uuid="s1")


@pytest.mark.parametrize(("failures", "low", "high"), [(1, 5, 10), (2, 10, 20), (3, 20, 40), (12, 450, 900)])
def test_retry_delays_double_with_jitter_up_to_the_cap(failures: int, low: float, high: float) -> None:
    policy = RetryPolicy(attempts=3, base_delay_s=10, max_delay_s=900)

    assert (policy.delay(failures, lambda: 0.0), policy.delay(failures, lambda: 1.0)) == (low, high)


def test_two_jobs_that_failed_together_come_back_at_different_times() -> None:
    delays = {RetryPolicy().delay(1) for _ in range(20)}

    assert len(delays) > 1


@pytest.mark.parametrize(
    ("buffered", "due"),
    [(19, False), (20, True), (21, False), (28, False), (40, False), (44, True), (48, False), (52, True)],
)
def test_a_new_turn_queues_at_the_point_and_each_batch_past_twice_the_point(buffered: int, due: bool) -> None:
    assert job_due(True, buffered, point=20, every=8) is due


class DownStore:
    def __getattr__(self, name: str) -> object:
        def fail(*_: object) -> object:
            raise Unavailable("The database is unavailable; nothing was written.")

        return fail


def test_a_failed_job_is_retried_after_the_backoff_until_its_last_attempt_then_dead() -> None:
    engine = fake_engine()
    engine.store = DownStore()  # type: ignore[assignment]
    source = RecordingJobSource()
    policy = RetryPolicy(attempts=3, base_delay_s=10)

    outcomes = [
        jobs.attempt(engine, source, ReceivedJob(receipt="r", job=JOB, receive_count=n), policy, lambda: 0.0)
        for n in (1, 2, 3)
    ]

    assert outcomes == ["retry", "retry", "dead"]
    assert source.settled[:2] == [("retry", 5.0), ("retry", 10.0)]
    [(state, error)] = source.settled[2:]
    assert state == "dead" and str(error).startswith(
        "Unavailable: The database is unavailable; nothing was written."
    )


def test_a_job_delivered_past_its_attempts_is_parked_unrun_with_why() -> None:
    # Given a job on its 4th delivery of 3: the runs before never settled it (timed out, crashed)
    engine = fake_engine()
    engine.store = DownStore()  # type: ignore[assignment]  # a run would fail: it must not run
    source = RecordingJobSource()
    message = ReceivedJob(receipt="r", job=JOB, receive_count=4)

    # When the worker gets it
    outcome = jobs.attempt(engine, source, message, RetryPolicy(attempts=3), lambda: 0.0)

    # Then it is parked at once, with an error that says what happened
    assert outcome == "dead"
    [(state, error)] = source.settled
    assert state == "dead" and str(error).startswith("Delivered 3 times and never settled")


@pytest.mark.parametrize(
    ("job", "retried_by"),
    [
        (JOB, ["the sweep", "the session's next turns", "`memory-engine jobs retry <id>`"]),
        (
            ChatMemoryJob(tenant="t", userid="u", dialog_uuid="d", user_messages=["hi"]),
            ["`memory-engine jobs retry <id>`"],
        ),
    ],
)
def test_a_dead_jobs_error_says_what_queues_it_again(job: Job, retried_by: list[str]) -> None:
    # Given a job that fails on its last attempt with an LLM error
    source = RecordingJobSource()
    engine = fake_engine()
    engine.store = DownStore()  # type: ignore[assignment]
    # When it is parked
    jobs.attempt(engine, source, ReceivedJob(receipt="r", job=job, receive_count=3), RetryPolicy(attempts=3))
    # Then its error ends with what retries it now that nothing will by itself
    [(_, error)] = source.settled
    assert "Parked as dead" in str(error) and all(way in str(error) for way in retried_by)
    assert "will be retried later" not in str(error)


def test_a_long_error_keeps_what_retries_the_job() -> None:
    reason = jobs.dead_reason(JOB, "x" * 5_000)

    assert len(reason) <= jobs.MAX_ERROR_CHARS and reason.endswith("`memory-engine jobs retry <id>`.")


def test_a_failure_that_is_not_the_engines_own_records_only_its_type() -> None:
    assert jobs.describe(KeyError("some user text")) == "KeyError (see the worker log)"


def test_a_queue_file_from_before_dead_letter_errors_is_migrated(tmp_path: Path) -> None:
    # Given a queue file written before the error columns existed, with a dead letter in it
    path = tmp_path / "memory-engine.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE queue_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, group_id TEXT NOT NULL,
              body TEXT NOT NULL, receive_count INTEGER NOT NULL DEFAULT 0, receipt TEXT,
              visible_at REAL NOT NULL DEFAULT 0, sent_at REAL NOT NULL);
            CREATE TABLE queue_dead (id INTEGER PRIMARY KEY AUTOINCREMENT, group_id TEXT NOT NULL,
              body TEXT NOT NULL, receive_count INTEGER NOT NULL, sent_at REAL NOT NULL,
              dead_at REAL NOT NULL);
            """
        )
        conn.execute(
            "INSERT INTO queue_dead (group_id, body, receive_count, sent_at, dead_at) VALUES (?, ?, 5, 0, 0)",
            (JOB.group_id(), JOB.model_dump_json()),
        )

    # When the queue opens it, then a job fails and is parked
    queue = SqliteQueue(path)
    queue.send(JOB.model_copy(update={"force": True}))
    queue.bury(queue.receive(1)[0], "boom")

    # Then the old dead letter reads with no error and the new one with its own
    assert [dead.error for dead in queue.dead_letters()] == ["", "boom"]
    queue.close()
