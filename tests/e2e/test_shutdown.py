"""Ctrl-C with work in flight: the server stops within seconds and exits 0 (issue #33 §1: it took
30 s and aborted with status 134). The job it had in hand is released for the next start
(tests/unit/test_worker_stop_and_restart.py)."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

from tests.e2e.conftest import LocalServer

LONG = "We walked along the harbour and talked about the lighthouse, the boats and the winter. " * 45


def test_sigint_with_an_extraction_and_a_retrieve_in_flight_exits_0_within_seconds(tmp_path: Path) -> None:
    server = LocalServer(tmp_path / "data")
    server.start()
    try:
        # Given an extraction job over long turns, and a retrieve over long buffered turns, running
        for n in range(16):
            turn = {"uuid": f"d{n}", "query": LONG, "answer": LONG}
            body = {"session_uuid": "s1", "parent_session_uuid": "t1", "new_dialog": turn}
            if n == 15:
                body["options"] = {"force_summary": True}
            assert server.call("POST", "/v1/engine/consolidate/", body)[0] == 200
        retrieve = {"parent_session_uuids": ["t1"], "user_input": {"query": "lighthouse"}}
        threading.Thread(
            target=lambda: server.call("POST", "/v1/engine/retrieve/", retrieve), daemon=True
        ).start()
        time.sleep(1.0)

        # When the server gets SIGINT
        process = server.process
        assert process is not None
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
        took = time.monotonic() - started
        server.process = None
    finally:
        server.stop()

    # Then it stopped cleanly within a few seconds
    assert process.returncode == 0, output[-2000:]
    assert took < 15, f"took {took:.1f} s"
    assert "memory-engine stopped" in output
