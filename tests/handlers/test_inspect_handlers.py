"""The memory inspector's lambda_handlers fed their sample events from events/ (and variations)."""

from __future__ import annotations

import copy
import importlib
import json
from typing import Any

from memory_engine.engine import Engine
from memory_engine.models.messages import ExtractionJob
from memory_engine.models.queue import DeadJob
from memory_engine_app.server.apigw import LocalContext
from tests.fakes.engine import run_worker
from tests.handlers.conftest import Invoke, load_event


def consolidate(invoke: Invoke, count: int, session: str = "session-1") -> None:
    for n in range(1, count + 1):
        body = json.loads(load_event("consolidate")["body"])
        body["session_uuid"] = session
        body["new_dialog"] = {
            "uuid": f"dialog-{n}",
            "query": f"제 강아지 이름은 후추예요 ({n})",
            "answer": "네",
        }
        assert invoke("consolidate", body)[0] == 200


def query(function: str, **params: str) -> tuple[int, dict[str, Any]]:
    """The function's sample event with other query parameters (none given: the sample's own)."""
    event = copy.deepcopy(load_event(function))
    if params:
        event["queryStringParameters"] = params
        event["multiValueQueryStringParameters"] = {name: [value] for name, value in params.items()}
    handler = importlib.import_module(f"functions.{function}.handler").lambda_handler
    result = handler(event, LocalContext())
    return result["statusCode"], json.loads(result["body"])


def test_the_threads_list_shows_each_thread_with_its_sessions(invoke: Invoke, engine: Engine) -> None:
    consolidate(invoke, 1)
    consolidate(invoke, 1, session="session-2")

    status, body = invoke("inspect_threads")

    assert status == 200
    assert [(t["thread"], [s["session_uuid"] for s in t["sessions"]]) for t in body["threads"]] == [
        ("thread-1", ["session-1", "session-2"])
    ]


def test_the_threads_list_names_the_memory_bank_scopes_with_their_fact_counts(invoke: Invoke) -> None:
    assert invoke("bank_create")[0] == 200

    status, body = invoke("inspect_threads")

    assert status == 200
    assert [(scope["scope"], scope["facts"]) for scope in body["scopes"]] == [
        (json.loads(load_event("bank_create")["body"])["scope"], 1)
    ]


def test_a_session_shows_its_turns_in_order_with_their_state_and_memories(
    invoke: Invoke, engine: Engine
) -> None:
    consolidate(invoke, 20)
    run_worker(engine)

    status, body = query("inspect_session")

    assert status == 200
    assert [turn["dialog_uuid"] for turn in body["turns"]] == [f"dialog-{n}" for n in range(1, 21)]
    assert body["counts"] == {"buffered": 4, "extracted": 16, "forgotten": 0}
    assert body["turns"][0]["query"] == "제 강아지 이름은 후추예요 (1)"
    first = body["memories"][0]
    assert first["source_dialog_uuids"] == [f"dialog-{n}" for n in range(1, 9)]
    assert set(first["fields"]) == {
        "summary", "keywords", "key_facts", "key_dialogue", "intent", "location", "characters"
    }  # fmt: skip
    assert "embedding" not in first and first["forked_from"] is None


def test_an_unknown_session_is_a_404(invoke: Invoke) -> None:
    status, body = query("inspect_session", session_uuid="nowhere")

    assert status == 404
    assert "nowhere" in body["message"]


def test_a_missing_query_parameter_is_a_422_naming_it(invoke: Invoke) -> None:
    status, body = query("inspect_delete_preview", session_uuid="session-1")

    assert status == 422
    assert body["errors"] == [{"field": "query.dialog_uuid", "message": "is required"}]


def test_a_forked_memory_names_the_memory_it_was_copied_from(invoke: Invoke, engine: Engine) -> None:
    consolidate(invoke, 20)
    original = run_worker(engine)[0]
    fork = {
        "source_session_uuid": "session-1",
        "target_session_uuid": "branch",
        "cutoff_dialog_uuid": "dialog-10",
    }
    assert invoke("fork", fork)[0] == 200

    status, body = query("inspect_memories", thread="branch")

    assert status == 200
    assert [memory["forked_from"] for memory in body["memories"]] == [original.memory_id]


def test_thread_memories_come_in_pages(invoke: Invoke, engine: Engine) -> None:
    consolidate(invoke, 20)
    run_worker(engine)

    first = query("inspect_memories", thread="thread-1", limit="1")[1]
    second = query("inspect_memories", thread="thread-1", limit="1", after=first["next_after"])[1]

    assert len(first["memories"]) == len(second["memories"]) == 1
    assert first["memories"][0]["memory_id"] < second["memories"][0]["memory_id"]


def test_the_delete_preview_shows_the_cascade_and_writes_nothing(invoke: Invoke, engine: Engine) -> None:
    consolidate(invoke, 20)
    memory = run_worker(engine)[0]
    before = engine.store.list_turns("tenant-a", "session-1")

    status, body = query("inspect_delete_preview", session_uuid="session-1", dialog_uuid="dialog-3")

    assert status == 200
    assert body["deleted_memories"] == [memory.memory_id]
    assert body["deleted_dialogs"] == ["dialog-3"]
    assert body["rebuffered_dialogs"] == [f"dialog-{n}" for n in (1, 2, 4, 5, 6, 7, 8)]
    assert engine.store.list_turns("tenant-a", "session-1") == before
    # And the delete itself then does just that.
    deleted = invoke("delete", {"session_uuid": "session-1", "dialog_uuid": "dialog-3"})[1]["data"]
    assert {key: deleted[key] for key in ("deleted_memories", "deleted_dialogs", "rebuffered_dialogs")} == {
        key: body[key] for key in ("deleted_memories", "deleted_dialogs", "rebuffered_dialogs")
    }


def test_the_delete_preview_of_a_memory_lists_the_turns_it_forgets(invoke: Invoke, engine: Engine) -> None:
    consolidate(invoke, 20)
    memory = run_worker(engine)[0]

    status, body = query("inspect_delete_preview", session_uuid="session-1", dialog_uuid=memory.memory_id)

    assert status == 200
    assert (body["deleted_memories"], body["deleted_dialogs"]) == ([memory.memory_id], [])
    assert body["forgotten_dialogs"] == memory.source_dialog_uuids


def test_the_delete_preview_of_a_buffered_turn_deletes_only_it(invoke: Invoke) -> None:
    consolidate(invoke, 1)

    status, body = query("inspect_delete_preview")

    assert (status, body["deleted_dialogs"], body["deleted_memories"]) == (200, ["dialog-1"], [])


def test_forcing_extraction_queues_a_forced_job_and_the_worker_extracts_the_short_batch(
    invoke: Invoke, engine: Engine
) -> None:
    consolidate(invoke, 3)

    status, body = invoke("inspect_extract")

    assert (status, body["buffered"]) == (200, 3)
    assert query("inspect_queue")[1]["pending"] == [
        ExtractionJob(tenant="tenant-a", session_uuid="session-1", force=True).model_dump()
    ]
    assert [memory.source_dialog_uuids for memory in run_worker(engine)] == [
        ["dialog-1", "dialog-2", "dialog-3"]
    ]


def test_forcing_extraction_of_an_empty_buffer_queues_nothing(invoke: Invoke, engine: Engine) -> None:
    consolidate(invoke, 8)
    invoke("inspect_extract")
    run_worker(engine)

    status, body = invoke("inspect_extract")

    assert (status, body["buffered"]) == (200, 0)
    assert query("inspect_queue")[1]["pending"] == []


def test_forcing_extraction_of_an_unknown_session_is_a_404(invoke: Invoke) -> None:
    assert invoke("inspect_extract", {"session_uuid": "nowhere"})[0] == 404


def test_the_queue_view_marks_a_dead_job_resolved_once_its_session_was_extracted_since(
    invoke: Invoke, engine: Engine
) -> None:
    # Given two dead extraction jobs: one whose session was extracted since (nothing buffered
    # that a job would take), one whose session still holds a full buffer
    consolidate(invoke, 20, session="waiting")
    run_worker(engine)
    consolidate(invoke, 20, session="still-full")
    engine.queue.pop_all()  # type: ignore[attr-defined]
    engine.queue.dead = [  # type: ignore[attr-defined]
        DeadJob(id=str(n), job=ExtractionJob(tenant="tenant-a", session_uuid=session), error="LlmUnavailable")
        for n, session in enumerate(("waiting", "still-full"))
    ]
    # When the queue is inspected
    status, body = query("inspect_queue")
    # Then the first is resolved (a retry would find nothing to do) and the second open
    assert status == 200
    assert {entry["job"]["session_uuid"]: entry["resolved"] for entry in body["dead"]} == {
        "waiting": True,
        "still-full": False,
    }
