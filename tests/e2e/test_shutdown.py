"""Ctrl-C with work in flight: the server stops within seconds and exits 0 (issue #33 §1: it took
30 s and aborted with status 134). After kill -9, the restarted server takes back the job the
dead one held at once (§3: it waited out its visibility timeout)."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

from tests.e2e.conftest import LocalServer, wait_on_work

LONG = "We walked along the harbour and talked about the lighthouse, the boats and the winter. " * 45


def say_long_turns(server: LocalServer) -> None:
    """16 long turns, the last with force_summary: one extraction job of two batches."""
    for n in range(16):
        turn = {"uuid": f"d{n}", "query": LONG, "answer": LONG}
        body = {"session_uuid": "s1", "parent_session_uuid": "t1", "new_dialog": turn}
        if n == 15:
            body["options"] = {"force_summary": True}
        assert server.call("POST", "/v1/engine/consolidate/", body)[0] == 200


def test_sigint_with_an_extraction_and_a_retrieve_in_flight_exits_0_within_seconds(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = LocalServer(data)
    server.start()
    try:
        # Given an extraction job over long turns in the worker's hands, and a retrieve of them
        say_long_turns(server)
        wait_on_work(server, lambda: jobs_in_hand(data) == 1)
        retrieve = {"parent_session_uuids": ["t1"], "user_input": {"query": "lighthouse"}}
        threading.Thread(
            target=lambda: server.call("POST", "/v1/engine/retrieve/", retrieve), daemon=True
        ).start()
        time.sleep(0.5)

        # When the server gets SIGINT
        process = server.process
        assert process is not None
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
        took = time.monotonic() - started
        server.process = None
    finally:
        output = server.stop()

    # Then it stopped cleanly (within its grace of seconds, not waiting out the job: no timed
    # assert, the host may be loaded), and left no job in hand: it was released, or done
    assert process.returncode == 0, f"after {took:.1f} s: {output[-2000:]}"
    assert "memory-engine stopped" in output
    assert jobs_in_hand(data) == 0


def test_after_kill_9_the_restarted_server_takes_back_the_job_at_once(tmp_path: Path) -> None:
    # Given a server (jobs in hand hidden for 600 s) killed while extracting long turns
    data = tmp_path / "data"
    server = LocalServer(data, env={"MEMORY_ENGINE_WORKER_VISIBILITY_SECONDS": "600"})
    server.start()
    try:
        say_long_turns(server)
        wait_on_work(server, lambda: jobs_in_hand(data) == 1)
        assert server.process is not None
        server.process.kill()
        server.process.wait()
        server.process = None
    finally:
        server.stop()
    assert jobs_in_hand(data) == 1

    # When it starts again
    server.start()
    try:
        # Then its worker takes the job again as soon as it is ready, not after the job's 600 s
        # visibility timeout (the wait's ceiling is well below it)
        wait_on_work(server, lambda: receives(data) >= 2)
    finally:
        server.stop()


def jobs_in_hand(data: Path) -> int:
    with closing(sqlite3.connect(data / "memory-engine.sqlite3", timeout=10)) as db:
        return int(db.execute("SELECT COUNT(*) FROM queue_messages WHERE receipt IS NOT NULL").fetchone()[0])


def receives(data: Path) -> int:
    """Deliveries of the session's job so far (2 once taken again; the job gone once done)."""
    with closing(sqlite3.connect(data / "memory-engine.sqlite3", timeout=10)) as db:
        row = db.execute("SELECT MAX(receive_count) FROM queue_messages").fetchone()
    return 2 if row[0] is None else int(row[0])
