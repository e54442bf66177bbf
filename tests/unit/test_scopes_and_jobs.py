"""Scope keys (exact match, any key order, case-sensitive), job parsing, and an old store file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.models.domain import is_reserved_thread, scope_key
from memory_engine.models.messages import ChatMemoryJob, ExtractionJob, parse_job


def test_a_scope_key_ignores_key_order() -> None:
    assert scope_key({"a": "1", "b": "2"}) == scope_key({"b": "2", "a": "1"})


@pytest.mark.parametrize(
    "other",
    [
        {"a": "1"},
        {"a": "1", "b": "2", "c": "3"},
        {"a": "1", "b": "X"},
        {"A": "1", "b": "2"},
        {"a": "1", "b": "2 "},
    ],
)
def test_a_scope_key_differs_for_any_other_keys_or_values(other: dict[str, str]) -> None:
    assert scope_key({"a": "1", "b": "2"}) != scope_key(other)


def test_the_thread_scope_is_the_engine_thread_itself() -> None:
    assert scope_key({"parent_session_uuid": "thread-1"}) == "thread-1"


def test_other_scopes_get_reserved_thread_names_no_caller_can_use() -> None:
    key = scope_key({"user_id": "123"})

    assert is_reserved_thread(key)
    assert not is_reserved_thread("thread-1")
    assert scope_key({"parent_session_uuid": key}) != key  # a reserved name is never taken as a thread


def test_a_job_body_without_a_kind_is_an_extraction_job() -> None:
    assert parse_job('{"tenant": "t", "session_uuid": "s", "force": true}') == ExtractionJob(
        tenant="t", session_uuid="s", force=True
    )


def test_a_chat_memory_job_survives_its_json_round_trip() -> None:
    job = ChatMemoryJob(tenant="t", userid="u", dialog_uuid="chat-1", user_messages=["후추는 내 강아지야."])

    assert parse_job(job.model_dump_json()) == job


def test_a_store_file_written_before_scopes_opens_and_reads_empty_scopes(tmp_path: Path) -> None:
    # Given a file whose memories table has no scope column (as the core engine's first version wrote it)
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE memories (tenant TEXT NOT NULL, memory_id TEXT NOT NULL,"
            " session_uuid TEXT NOT NULL, parent_session_uuid TEXT NOT NULL, fields TEXT NOT NULL,"
            " source_dialog_uuids TEXT NOT NULL,"
            " first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, embedding BLOB NOT NULL,"
            " source_text TEXT NOT NULL, created_at TEXT NOT NULL, metadata TEXT NOT NULL,"
            " PRIMARY KEY (tenant, memory_id))"
        )
        conn.execute(
            "INSERT INTO memories VALUES ('t', '20260318_040037_d60e66', 's', 'thread-1', ?, '[]', 0, 0, x'',"
            " '', '2026-03-18T04:00:37.000000+00:00', '{}')",
            (json.dumps({"summary": "old memory"}),),
        )
    # When the store opens it
    memory = SqliteStore(path).get_memory("t", "20260318_040037_d60e66")
    # Then the memory reads back, with the thread as its scope
    assert memory is not None
    assert (memory.content, memory.scope, memory.visible_scope) == (
        "old memory",
        {},
        {"parent_session_uuid": "thread-1"},
    )
