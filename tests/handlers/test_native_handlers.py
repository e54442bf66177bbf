"""Each native route's lambda_handler fed its sample event from events/."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from functions.routes import ROUTES
from memory_engine.engine import Engine
from memory_engine_app.server.apigw import LocalContext
from tests.fakes.engine import run_worker
from tests.handlers.conftest import Invoke, load_event


def turn(n: int, text: str | None = None) -> dict[str, Any]:
    body = load_event("consolidate")["body"]
    payload = json.loads(body)
    payload["new_dialog"] = {"uuid": f"dialog-{n}", "query": text or f"turn {n}", "answer": "네"}
    return payload


def test_every_function_has_a_sample_event_for_one_of_its_routes() -> None:
    for function in {route.function for route in ROUTES}:
        event = load_event(function)
        served = {(route.method, route.path) for route in ROUTES if route.function == function}
        assert (event["httpMethod"], event["resource"]) in served, function


def test_health_answers_ok_without_a_key(invoke: Invoke) -> None:
    assert invoke("health", tenant=None) == (200, {"status": "ok", "service": "memory-engine"})


def test_the_sample_consolidate_event_is_accepted(invoke: Invoke) -> None:
    assert invoke("consolidate") == (
        200,
        {"status": "success", "message": None, "extraction_queued": False, "buffered": 1},
    )


def test_the_sample_retrieve_event_finds_the_sample_turn(invoke: Invoke) -> None:
    invoke("consolidate")
    status, body = invoke("retrieve")
    assert status == 200
    assert body["status"] == "success"
    assert [hit["memory_id"] for hit in body["data"]] == ["dialog-1"]
    assert set(body["data"][0]) >= {"memory_id", "content", "score"}


def test_the_sample_delete_event_deletes_the_sample_turn(invoke: Invoke) -> None:
    invoke("consolidate")
    status, body = invoke("delete")
    assert status == 200
    assert body["data"]["deleted_dialogs"] == ["dialog-1"]


def test_the_sample_fork_event_creates_the_branch(invoke: Invoke, engine: Engine) -> None:
    invoke("consolidate")
    status, body = invoke("fork")
    assert status == 200
    assert body["data"]["target_session_uuid"] == "session-1-branch"
    assert engine.store.get_session("tenant-a", "session-1-branch") is not None


def test_the_sample_embed_event_returns_one_vector_of_the_model_dimension(invoke: Invoke) -> None:
    status, body = invoke("embed")
    assert status == 200
    assert body["dimension"] == len(body["embedding"]) == 64


def test_embedding_a_list_returns_one_vector_per_text(invoke: Invoke) -> None:
    status, body = invoke("embed", {"text": ["a", "b", "c"], "mode": "passage"})
    assert status == 200
    assert len(body["embeddings"]) == 3


@pytest.mark.parametrize("function", sorted({r.function for r in ROUTES if r.auth}))
def test_a_request_without_a_resolved_tenant_is_unauthorized(invoke: Invoke, function: str) -> None:
    status, body = invoke(function, tenant=None)
    assert status == 401
    # Each dialect words it in its own envelope; every one names the missing key.
    assert "API key" in json.dumps(body)


def test_malformed_json_is_a_400_naming_the_body(invoke: Invoke) -> None:
    status, body = invoke("consolidate", raw="{not json")
    assert status == 400
    assert body["errors"] == [{"field": "body", "message": "malformed JSON"}]


def test_a_missing_field_is_a_422_naming_it(invoke: Invoke) -> None:
    payload = turn(1)
    del payload["session_uuid"]
    status, body = invoke("consolidate", payload)
    assert status == 422
    assert {"field": "session_uuid", "message": "is required"} in body["errors"]
    assert "session_uuid" in body["message"]


def test_a_wrong_type_is_a_422_naming_the_nested_field(invoke: Invoke) -> None:
    payload = turn(1)
    payload["new_dialog"]["query"] = 42
    status, body = invoke("consolidate", payload)
    assert status == 422
    assert [error["field"] for error in body["errors"]] == ["new_dialog.query"]


def test_a_limit_over_fifty_is_a_422(invoke: Invoke) -> None:
    status, body = invoke(
        "retrieve", {"parent_session_uuids": ["t"], "user_input": {"query": "q"}, "options": {"limit": 51}}
    )
    assert status == 422
    assert body["errors"][0]["field"] == "options.limit"


def test_the_same_dialog_uuid_with_other_content_is_a_409(invoke: Invoke) -> None:
    invoke("consolidate", turn(1, "first words"))
    status, body = invoke("consolidate", turn(1, "other words"))
    assert status == 409
    assert "dialog-1" in body["message"]


def test_deleting_an_unknown_dialog_is_a_404(invoke: Invoke) -> None:
    invoke("consolidate")
    status, body = invoke("delete", {"session_uuid": "session-1", "dialog_uuid": "missing"})
    assert status == 404
    assert body["status"] == "error"


def test_twenty_turns_through_the_handler_become_memories(invoke: Invoke, engine: Engine) -> None:
    for n in range(1, 21):
        assert invoke("consolidate", turn(n))[0] == 200
    assert len(run_worker(engine)) == 2


def test_a_body_sent_as_form_data_by_curl_is_read_as_json(invoke: Invoke) -> None:
    # Given the sample event relabelled as curl -d labels it
    event = load_event("consolidate")
    event["headers"]["Content-Type"] = "application/x-www-form-urlencoded"
    event["multiValueHeaders"]["Content-Type"] = ["application/x-www-form-urlencoded"]
    # When it reaches the handler
    result = importlib.import_module("functions.consolidate.handler").lambda_handler(event, LocalContext())
    # Then the JSON body is accepted
    assert (result["statusCode"], json.loads(result["body"])["status"]) == (200, "success")
