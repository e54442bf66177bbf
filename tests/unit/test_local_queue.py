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
