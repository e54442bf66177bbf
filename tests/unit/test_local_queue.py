"""The local queue's own optimisation, beyond the queue contract every backend passes."""

from __future__ import annotations

from pathlib import Path

from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.models.messages import ExtractionJob


def test_the_local_queue_drops_a_job_identical_to_one_still_waiting(tmp_path: Path) -> None:
    # Given a job waiting in the local queue
    queue = SqliteQueue(tmp_path / "queue.sqlite3")
    job = ExtractionJob(tenant="tenant-a", session_uuid="s1")
    queue.send(job)

    # When its twin is sent before any worker took the first
    queue.send(job)

    # Then only one message waits: the twin would have done exactly the same work
    assert queue.pending_count() == 1
    queue.close()


def test_a_job_never_settled_is_parked_with_an_error_that_says_so(tmp_path: Path) -> None:
    # Given a job whose every delivery ended without a word (its process killed each time)
    queue = SqliteQueue(tmp_path / "q.sqlite3", max_receives=2)
    queue.send(ExtractionJob(tenant="acme", session_uuid="s1"))
    for _ in range(2):
        assert len(queue.receive(1, 0)) == 1

    # When the next receive finds it past its deliveries
    assert queue.receive(1, 30) == []

    # Then it is parked with the reason, not with an empty error
    [dead] = queue.dead_letters()
    assert dead.error.startswith("Delivered 2 times and never settled")


def test_a_job_released_with_a_reason_is_parked_with_that_reason(tmp_path: Path) -> None:
    # Given a job released twice by a worker that was stopping
    queue = SqliteQueue(tmp_path / "q.sqlite3", max_receives=2)
    queue.send(ExtractionJob(tenant="acme", session_uuid="s1"))
    for _ in range(2):
        [message] = queue.receive(1, 30)
        queue.release(message.receipt, "The worker stopped while the job ran")

    # When the next receive finds it past its deliveries
    queue.receive(1, 30)

    # Then its dead letter says why its last run ended
    assert [dead.error for dead in queue.dead_letters()] == ["The worker stopped while the job ran"]
