"""The memory inspector's local pieces: the static page's serving, and the failure reasons the
local queue and worker keep for dead jobs (files written before that included)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.models.messages import ExtractionJob
from memory_engine_app.server.inspector_assets import INSPECTOR_PATH, PAGE_POLICY, inspector_asset

JOB = ExtractionJob(tenant="tenant-a", session_uuid="s1")


def test_the_inspector_page_is_served_as_utf8_html_with_a_same_origin_policy() -> None:
    status, headers, body = inspector_asset(INSPECTOR_PATH) or (0, [], b"")

    assert status == 200
    assert dict(headers)["Content-Type"] == "text/html; charset=utf-8"
    assert "default-src 'self'" in dict(headers)["Content-Security-Policy"]
    assert b'<meta charset="utf-8">' in body and b"inspector.js" in body


def test_the_page_carries_its_own_policy_for_hosts_that_send_no_headers() -> None:
    # Given the page as a bucket would serve it: its bytes alone
    _, headers, body = inspector_asset(INSPECTOR_PATH) or (0, [], b"")
    # Then its <meta> policy, before any script, is the one the local server sends, and calls
    # only its own origin
    found = re.search(rb'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', body)
    assert found is not None and found.start() < body.index(b"<script")
    assert found.group(1).decode() == PAGE_POLICY and "connect-src 'self'" in PAGE_POLICY
    assert dict(headers)["Content-Security-Policy"] == f"{PAGE_POLICY}; frame-ancestors 'none'"


def test_the_hosting_docs_set_the_policy_the_local_server_sends() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "inspector.md").read_text()

    assert f"content_security_policy=\"{PAGE_POLICY}; frame-ancestors 'none'\"" in docs
    assert "HeadersFrameOption.DENY" in docs and "ResponseHeadersContentTypeOptions" in docs


def test_the_script_and_style_are_served_with_their_types() -> None:
    types = {name: dict(inspector_asset(INSPECTOR_PATH + name)[1])["Content-Type"]  # type: ignore[index]
             for name in ("inspector.js", "inspector.css")}  # fmt: skip

    assert types == {
        "inspector.js": "text/javascript; charset=utf-8",
        "inspector.css": "text/css; charset=utf-8",
    }


def test_only_the_inspector_files_are_served_never_a_path_outside_them() -> None:
    for path in (
        "/inspector/../app.py",
        "/inspector/%2e%2e/app.py",
        "/inspector/__init__.py",
        "/inspector/x/y",
    ):
        answer = inspector_asset(path)
        assert answer is not None and answer[0] == 404, path


def test_the_bare_inspector_path_redirects_to_the_page_and_other_paths_are_not_its_business() -> None:
    assert inspector_asset("/inspector") == (308, [("Location", INSPECTOR_PATH)], b"")
    assert inspector_asset("/v1/engine/health/") is None


def test_a_dead_job_shows_the_error_it_was_parked_with(tmp_path: Path) -> None:
    # Given a job the worker parked after its last failure (usecases.jobs.attempt buries it)
    queue = SqliteQueue(tmp_path / "queue.sqlite3", max_receives=2)
    queue.send(JOB)
    [message] = queue.receive(1, 30)
    queue.bury(message, "TimeoutError: the model did not answer in 30 s")

    # Then the inspector's snapshot lists it with that error, and nothing is pending
    snapshot = queue.snapshot("tenant-a")
    [dead] = snapshot.dead or []
    assert (dead.job, dead.error) == (JOB, "TimeoutError: the model did not answer in 30 s")
    assert snapshot.pending == []
    assert queue.snapshot("tenant-b").dead == []
    queue.close()


def test_a_queue_file_written_before_errors_were_kept_is_upgraded_in_place(tmp_path: Path) -> None:
    # Given a queue file with the tables as they were, one message waiting
    path = tmp_path / "queue.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE queue_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, group_id TEXT NOT NULL,"
            " body TEXT NOT NULL, receive_count INTEGER NOT NULL DEFAULT 0, receipt TEXT,"
            " visible_at REAL NOT NULL DEFAULT 0, sent_at REAL NOT NULL);"
            "CREATE TABLE queue_dead (id INTEGER PRIMARY KEY AUTOINCREMENT, group_id TEXT NOT NULL,"
            " body TEXT NOT NULL, receive_count INTEGER NOT NULL, sent_at REAL NOT NULL,"
            " dead_at REAL NOT NULL);"
        )
        conn.execute(
            "INSERT INTO queue_messages (group_id, body, sent_at) VALUES (?, ?, 0)",
            (JOB.group_id(), JOB.model_dump_json()),
        )

    # When this version opens it and a failure is recorded
    queue = SqliteQueue(path, max_receives=1)
    queue.release(queue.receive(1)[0].receipt, "Unavailable: index down")
    queue.receive(1)

    # Then the job and its reason are there
    assert [(dead.job, dead.error) for dead in queue.snapshot("tenant-a").dead] == [
        (JOB, "Unavailable: index down")
    ]
    queue.close()
