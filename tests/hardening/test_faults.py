"""Faults on the local backend: a worker killed between extraction and write, a job delivered
twice, an index write failing after the store write, the store failing mid-consolidate.

Each ends with every accepted turn present exactly once, no duplicate memory, and a search index
that agrees with the store (`assert_consistent`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memory_engine.errors import Unavailable
from memory_engine.models.domain import Turn
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import Extraction, ExtractionContext, IndexDocument
from memory_engine.usecases import extract
from memory_engine.usecases.indexing import rebuild
from tests.fakes.ports import EchoExtractor
from tests.fakes.stack import LocalStack, local_stack
from tests.hardening.consistency import assert_consistent

ROOT = Path(__file__).resolve().parents[2]
TENANT, SESSION, THREAD = "local", "s1", "t1"


def say(stack: LocalStack, n: int, **options: Any) -> int:
    body = {
        "session_uuid": SESSION,
        "parent_session_uuid": THREAD,
        "new_dialog": {"uuid": f"d{n:02d}", "query": f"turn {n} about gardens", "answer": "ok"},
        "options": options,
    }
    return stack.call("POST", "/v1/engine/consolidate/", body)[0]


def fill(stack: LocalStack, count: int = 20) -> list[str]:
    assert [say(stack, n) for n in range(count)] == [200] * count
    return [f"d{n:02d}" for n in range(count)]


# -- a worker killed between extraction and write -----------------------------------------------

KILLABLE_WORKER = """
import sys, time
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.engine import Engine
from memory_engine.settings import Settings
from memory_engine.usecases import extract
from tests.fakes.ports import EchoExtractor, HashEmbedder

class StopsBeforeWriting:
    def __init__(self, store): self._store = store
    def __getattr__(self, name): return getattr(self._store, name)
    def save_memory(self, memory):
        print("extracted, about to write", flush=True)
        time.sleep(600)  # killed here

path = sys.argv[1]
queue = SqliteQueue(path)
store = StopsBeforeWriting(SqliteStore(path))
engine = Engine(Settings(), store, queue, LocalSearchIndex(), HashEmbedder(), EchoExtractor())
[message] = queue.receive(1, visibility_seconds=1)
extract.run(engine, message.job)
"""


def test_a_worker_killed_between_extraction_and_write_loses_nothing(
    stack: LocalStack, tmp_path: Path
) -> None:
    accepted = fill(stack)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])}
    worker = subprocess.Popen(
        [sys.executable, "-c", KILLABLE_WORKER, str(tmp_path / "memory-engine.sqlite3")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None and "about to write" in worker.stdout.readline()

    worker.kill()
    worker.wait(30)
    time.sleep(1.2)  # the killed worker's job becomes visible again
    ran = stack.drain()

    assert worker.returncode == -9 and ran >= 1
    assert len(stack.engine.store.list_memories(TENANT, SESSION)) == 2
    assert_consistent(stack.engine, TENANT, [SESSION], {SESSION: accepted})


# -- the same job delivered twice ----------------------------------------------------------------


def test_a_job_delivered_again_after_it_was_done_writes_nothing_more(stack: LocalStack) -> None:
    accepted = fill(stack)
    first = stack.queue.receive(1)[0]
    stack.queue.send(first.job)  # the twin, as SQS at-least-once delivery may hand out

    extract.run(stack.engine, first.job)
    stack.queue.ack(first.receipt)
    ran_again = stack.drain()

    assert ran_again == 1
    assert len(stack.engine.store.list_memories(TENANT, SESSION)) == 2
    assert_consistent(stack.engine, TENANT, [SESSION], {SESSION: accepted})


class SlowExtractor(EchoExtractor):
    """Slow enough that two deliveries of one job overlap."""

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        time.sleep(0.05)
        return super().extract(turns, context)


def test_two_workers_running_the_same_job_at_once_write_each_memory_once(tmp_path: Path) -> None:
    with local_stack(tmp_path, extractor=SlowExtractor()) as stack:
        accepted = fill(stack)
        job = ExtractionJob(tenant=TENANT, session_uuid=SESSION)
        written: list[int] = []
        workers = [
            threading.Thread(target=lambda: written.append(len(extract.run(stack.engine, job))))
            for _ in range(2)
        ]

        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)

        assert sum(written) == 2
        assert_consistent(stack.engine, TENANT, [SESSION], {SESSION: accepted})


# -- the index write failing after the store write -----------------------------------------------


class FlakyIndex:
    """The real index, with its next `failures` upserts failing (OpenSearch down for a while)."""

    def __init__(self, index: Any, failures: int) -> None:
        self._index = index
        self.failures = failures

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise Unavailable("search index unavailable")
        self._index.upsert(docs)


def test_an_index_write_failing_after_the_store_write_is_healed_by_the_retry(stack: LocalStack) -> None:
    accepted = fill(stack)
    stack.engine.index = FlakyIndex(stack.engine.index, failures=2)  # type: ignore[assignment]

    for _ in range(3):  # each failed delivery is released and redelivered
        stack.drain()

    memories = stack.engine.store.list_memories(TENANT, SESSION)
    hits = stack.call(
        "POST",
        "/v1/engine/retrieve/",
        {"parent_session_uuids": [THREAD], "user_input": {"query": "gardens"}, "options": {"limit": 50}},
    )[2]
    assert len(memories) == 2 and stack.queue.pending_count() == 0
    assert {m.memory_id for m in memories} <= {hit["memory_id"] for hit in hits["data"]}
    assert_consistent(stack.engine, TENANT, [SESSION], {SESSION: accepted})


def test_an_index_down_for_longer_than_the_retries_is_healed_by_reindex(stack: LocalStack) -> None:
    accepted = fill(stack)
    stack.engine.index = FlakyIndex(stack.engine.index, failures=1_000)  # type: ignore[assignment]
    for _ in range(6):
        stack.drain()
    assert [job.session_uuid for job in stack.queue.dead_jobs()] == [SESSION]  # parked, not dropped

    stack.engine.index.failures = 0  # type: ignore[attr-defined]
    rebuild(stack.engine.store, stack.engine.index)

    # The first batch was stored before the index failed; the rest stay buffered (searchable) for
    # the session's next extraction.
    assert len(stack.engine.store.list_memories(TENANT, SESSION)) == 1
    assert len(stack.engine.store.buffered_turns(TENANT, SESSION)) == 12
    assert_consistent(stack.engine, TENANT, [SESSION], {SESSION: accepted})


# -- the store failing mid-consolidate ------------------------------------------------------------


def fill_the_disk(stack: LocalStack) -> None:
    """No page may be added to the database file any more, as on a full disk."""
    with stack.engine.store._db.read() as conn:  # type: ignore[attr-defined]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")


def free_the_disk(stack: LocalStack) -> None:
    with stack.engine.store._db.read() as conn:  # type: ignore[attr-defined]
        conn.execute("PRAGMA max_page_count = 1073741823")


@pytest.mark.parametrize("new_session", [True, False], ids=["first turn", "later turn"])
def test_a_store_failing_mid_consolidate_is_a_503_and_leaves_no_half_written_turn(
    stack: LocalStack, new_session: bool
) -> None:
    accepted = [] if new_session else fill(stack, 3)
    big = {
        "session_uuid": SESSION,
        "parent_session_uuid": THREAD,
        "new_dialog": {"uuid": "big", "query": "무" * 100_000, "answer": "ok"},
    }
    fill_the_disk(stack)

    status, _, body = stack.call("POST", "/v1/engine/consolidate/", big)

    assert status == 503 and "nothing was written" in body["message"] and ".sqlite3" not in body["message"]
    assert stack.engine.store.get_turn(TENANT, SESSION, "big") is None
    assert (stack.engine.store.get_session(TENANT, SESSION) is None) == new_session
    free_the_disk(stack)
    assert stack.call("POST", "/v1/engine/consolidate/", big)[0] == 200  # the client's retry
    assert_consistent(stack.engine, TENANT, [SESSION], {SESSION: [*accepted, "big"]})
