"""The local worker stops within a check of being told, releasing the job in hand; and a worker
starting after a crash (kill -9) takes back at once the jobs the dead process held, instead of
letting them and their sessions' later jobs wait out the visibility timeout (issue #33 §3)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.embedding import BoundedEmbedder
from memory_engine.engine import Engine
from memory_engine.limits import Limits
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.messages import ExtractionJob
from memory_engine.models.queue import ReceivedJob
from memory_engine.ports import EmbedMode
from memory_engine.settings import Settings
from memory_engine.usecases import consolidate
from memory_engine_app import local_engine
from memory_engine_app.worker import LocalWorker
from tests.fakes.ports import EchoExtractor, HashEmbedder


class Blocking(HashEmbedder):
    """Signals its first passage call, and holds it until `go` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.go = threading.Event()

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if mode == "passage":
            self.started.set()
            self.go.wait(10)
        return super().embed(texts, mode)


def engine_on(path: Path, embedder: HashEmbedder) -> Engine:
    return Engine(
        limits=Limits.of(Settings(extraction_threshold=8, worker_retry_base_seconds=0)),
        store=SqliteStore(path),
        queue=SqliteQueue(path),
        index=LocalSearchIndex(),
        embedder=BoundedEmbedder(embedder, max_chars=2048),
        extractor=EchoExtractor(),
    )


def fill(engine: Engine, turns: int = 8) -> None:
    for n in range(turns):
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "t1",
            "new_dialog": {"uuid": f"d{n}", "query": f"turn {n}"},
        }
        consolidate.run(engine, "acme", ConsolidateRequest.model_validate(request))


def test_stopping_the_worker_releases_the_job_in_hand_at_its_next_check(tmp_path: Path) -> None:
    # Given a worker in the middle of a job's embedding
    embedder = Blocking()
    engine = engine_on(tmp_path / "db.sqlite3", embedder)
    fill(engine)
    worker = local_engine.local_worker(engine, sweep=False)
    worker.start()
    assert embedder.started.wait(10)

    # When it is told to stop while that call finishes
    stopping = threading.Thread(target=lambda: stopped.append(worker.stop(timeout=10)))
    stopped: list[bool] = []
    stopping.start()
    embedder.go.set()
    stopping.join(15)

    # Then it stopped at the next check: no memory written, and the job visible again at once,
    # neither dead nor held back by a retry delay
    assert stopped == [True]
    assert engine.store.list_memories("acme", "s1") == []
    queue = engine.queue
    assert isinstance(queue, SqliteQueue)
    assert queue.dead_jobs() == []
    [again] = queue.receive(1, 30)
    assert again.job == ExtractionJob(tenant="acme", session_uuid="s1")


def test_a_worker_whose_job_outlasts_the_stop_timeout_still_hands_the_job_back(tmp_path: Path) -> None:
    # Given a worker in the middle of an embedding that will not return before the stop gives up
    embedder = Blocking()
    engine = engine_on(tmp_path / "db.sqlite3", embedder)
    fill(engine)
    worker = local_engine.local_worker(engine, sweep=False)
    worker.start()
    assert embedder.started.wait(10)

    # When it is told to stop with no time to wait (a loaded host: the check comes too late)
    stopped = worker.stop(timeout=0)
    embedder.go.set()

    # Then the stop says it did not end the thread, but the job is visible again at once, not
    # hidden until its visibility timeout runs out
    assert stopped is False
    queue = engine.queue
    assert isinstance(queue, SqliteQueue)
    [again] = queue.receive(1, 30)
    assert again.job == ExtractionJob(tenant="acme", session_uuid="s1")


def test_a_worker_starting_after_a_crash_takes_back_at_once_what_the_dead_one_held(tmp_path: Path) -> None:
    # Given a job a process received (hidden for 330 s) before it was killed
    path = tmp_path / "db.sqlite3"
    dead = SqliteQueue(path)
    dead.send(ExtractionJob(tenant="acme", session_uuid="s1"))
    dead.send(ExtractionJob(tenant="acme", session_uuid="s1", force=True))
    [held] = dead.receive(1, visibility_seconds=330)

    # When a new process's worker starts on the same queue
    taken: list[ReceivedJob] = []
    got = threading.Event()

    def attempt(message: ReceivedJob) -> str:
        taken.append(message)
        got.set()
        return "done"

    worker = LocalWorker(SqliteQueue(path), attempt, poll_seconds=0.01)
    worker.start()
    try:
        assert got.wait(10)
    finally:
        worker.stop()

    # Then the held job was delivered again at once, before its session's next one, its receive counted
    assert taken[0].job == held.job and taken[0].receive_count == 2


def test_releasing_in_flight_jobs_leaves_those_waiting_out_a_retry_delay(tmp_path: Path) -> None:
    # Given one job in hand and another waiting out a retry delay
    queue = SqliteQueue(tmp_path / "db.sqlite3")
    queue.send(ExtractionJob(tenant="acme", session_uuid="s1"))
    queue.send(ExtractionJob(tenant="acme", session_uuid="s2"))
    first, second = queue.receive(2, 330)
    queue.retry_later(second.receipt, 600, "the model was down")

    # When the worker's start releases what was in flight
    released = queue.release_in_flight()

    # Then only the one in hand is delivered again now
    assert released == 1
    assert [message.job for message in queue.receive(2, 30)] == [first.job]


def test_with_two_slots_two_sessions_jobs_run_side_by_side(tmp_path: Path) -> None:
    # Given two sessions' jobs and a worker with two slots whose jobs wait for each other
    queue = SqliteQueue(tmp_path / "db.sqlite3")
    queue.send(ExtractionJob(tenant="acme", session_uuid="s1"))
    queue.send(ExtractionJob(tenant="acme", session_uuid="s2"))
    together = threading.Barrier(2, timeout=10)
    sessions: list[str] = []
    both = threading.Event()

    def attempt(message: ReceivedJob) -> str:
        together.wait()  # broken (an error) unless the other job runs at the same time
        sessions.append(message.job.session_uuid)
        if len(sessions) == 2:
            both.set()
        return "done"

    worker = LocalWorker(queue, attempt, poll_seconds=0.01, slots=2)

    # When it runs
    worker.start()
    try:
        both.wait(10)
    finally:
        assert worker.stop()

    # Then both jobs ran at once, and were acked
    assert sorted(sessions) == ["s1", "s2"]
    assert queue.pending_count() == 0
