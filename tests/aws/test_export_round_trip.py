"""A tenant moved from the local server to a stack on the AWS adapters (moto) and back, the way an
operator would: `memory-engine export` locally, `memory-engine import` into the stack's table,
`GET /v1/export` page by page with the stack's key, `memory-engine import` into a fresh local data
folder. Nothing is lost: the records of the last are those of the first, count by count and
field by field."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from memory_engine.models.export import ExportRecord, Selection
from memory_engine.usecases import export
from memory_engine_app import cli
from tests.fakes.stack import LOCAL_KEY, LocalStack, local_stack, moto_stack

LOCAL = "local"  # the tenant of the local server's own key


def consolidate(
    stack: LocalStack, session: str, thread: str, uuid: str, query: str, key: str = LOCAL_KEY, **options: Any
) -> None:
    body = {
        "session_uuid": session,
        "parent_session_uuid": thread,
        "new_dialog": {"uuid": uuid, "query": query, "answer": "I see."},
        "options": options,
    }
    status, _, answer = stack.call("POST", "/v1/engine/consolidate/", body, key=key)
    assert status == 200, answer


def fill(stack: LocalStack, key: str = LOCAL_KEY) -> None:
    """Two threads with extracted and buffered turns, and facts of two users, one expiring."""
    consolidate(stack, "s1", "thread-1", "d1", "I live in Busan with my cat Mochi.", key)
    consolidate(stack, "s1", "thread-1", "d2", "Mochi likes tuna.", key, force_summary=True)
    consolidate(stack, "s2", "thread-1", "d3", "I moved to Seoul last month.", key)
    consolidate(stack, "s3", "thread-2", "d4", "민수는 다음 달에 제주도에 가.", key, force_summary=True)
    stack.drain()
    for body in (
        {"fact": "The user is allergic to peanuts.", "scope": {"user_id": "123"}},
        {"fact": "The user plays chess.", "scope": {"user_id": "456"}},
        {"fact": "The user is in Busan this week.", "scope": {"user_id": "123"}, "ttl_seconds": 86_400},
    ):
        status, _, answer = stack.call("POST", "/v1/memories", body, key=key)
        assert status == 200, answer


def cli_on(stack: LocalStack, *argv: str) -> None:
    from memory_engine.composition import wiring

    wiring.use(stack.engine)
    assert cli.main(list(argv)) == 0


def exported_by_route(stack: LocalStack, key: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    cursor: str | None = None
    pages = 0
    while True:
        query = "?" + urlencode({"cursor": cursor}) if cursor else ""
        status, _, page = stack.call("GET", "/v1/export" + query, key=key)
        assert status == 200, page
        records += page["records"]
        pages += 1
        cursor = page.get("next_cursor")
        if cursor is None:
            return records


def canonical(records: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(record, sort_keys=True, ensure_ascii=False) for record in records)


def test_local_to_a_moto_stack_and_back_loses_nothing(tmp_path: Path) -> None:
    first, back = tmp_path / "first", tmp_path / "back"
    first.mkdir()
    back.mkdir()
    dump, from_aws = tmp_path / "local.jsonl", tmp_path / "aws.jsonl"
    with local_stack(first) as source:
        fill(source)
        cli_on(source, "export", "--tenant", LOCAL, "--out", str(dump))
        original = [
            record.model_dump(mode="json") for record in export.walk(source.engine.store, LOCAL, Selection())
        ]

    with moto_stack() as deployed:
        key = deployed.key_for("acme")
        cli_on(deployed, "import", str(dump), "--tenant", "acme")
        by_route = exported_by_route(deployed, key)
        cli_on(deployed, "import", str(dump), "--tenant", "acme")  # twice: written once
        assert canonical(exported_by_route(deployed, key)) == canonical(by_route)
        # and a retrieve on the stack finds what was imported, embedded by its own model
        body = {"parent_session_uuids": ["thread-1"], "user_input": {"query": "Mochi tuna cat"}}
        status, _, found = deployed.call("POST", "/v1/engine/retrieve/", body, key=key)
        assert status == 200 and "Mochi" in json.dumps(found["data"], ensure_ascii=False)
    from_aws.write_text("".join(json.dumps(record) + "\n" for record in by_route), encoding="utf-8")

    with local_stack(back) as restored:
        cli_on(restored, "import", str(from_aws), "--tenant", LOCAL)
        final = [
            record.model_dump(mode="json")
            for record in export.walk(restored.engine.store, LOCAL, Selection())
        ]
        status, _, facts = restored.call(
            "POST",
            "/v1/memories:retrieve",
            {"scope": {"user_id": "123"}, "simple_retrieval_params": {}},
            key=LOCAL_KEY,
        )

    kinds = Counter(record["kind"] for record in original)
    assert kinds["session"] == 3 and kinds["turn"] == 4 and kinds["memory"] == 2 + 3
    assert Counter(record["kind"] for record in by_route) == kinds
    assert canonical(by_route) == canonical(original)
    assert canonical(final) == canonical(original)
    assert sorted(hit["memory"]["fact"] for hit in facts["retrieved_memories"]) == [
        "The user is allergic to peanuts.",
        "The user is in Busan this week.",
    ]
    assert all(ExportRecord.model_validate(record).version == 1 for record in final)


def test_a_keys_data_is_exported_over_http_from_a_stack_on_moto(tmp_path: Path) -> None:
    # Given a stack on the AWS adapters holding a tenant's data, behind a real HTTP server
    from tests.fakes.stack import serve_http

    dump = tmp_path / "remote.jsonl"
    with moto_stack() as deployed, serve_http(deployed) as base:
        key = deployed.key_for("acme")
        fill(deployed, key)
        expected = [
            record.model_dump(mode="json")
            for record in export.walk(deployed.engine.store, "acme", Selection())
        ]

        # When `memory-engine export --api` pages GET /v1/export with the tenant's key
        assert cli.main(["export", "--api", base, "--key", key, "--out", str(dump)]) == 0

    # Then the file is a header line and exactly the tenant's records
    lines = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["kind"] == "export" and lines[0]["version"] == 1
    assert canonical(lines[1:]) == canonical(expected)
    assert Counter(line["kind"] for line in lines[1:])["turn"] == 4
