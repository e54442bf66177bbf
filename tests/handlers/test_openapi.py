"""The OpenAPI document: every route of functions/routes.py, its auth, and every error it answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from functions.routes import ROUTES
from memory_engine_app import cli
from memory_engine_app.server.openapi import GATEWAY_STATUSES, HANDLER_STATUSES, build_spec, error_schema


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return build_spec()


def shape(path: str) -> str:
    """A path with its parameter names left out: routes.py says {id} where a handler says {memory_id}."""
    return re.sub(r"\{[^}]+\}", "{}", path)


def operation(spec: dict[str, Any], route: Any) -> dict[str, Any]:
    [path] = [path for path in spec["paths"] if shape(path) == shape(route.path)]
    found: dict[str, Any] = spec["paths"][path][route.method.lower()]
    return found


def test_every_route_is_documented_under_the_path_clients_call(spec: dict[str, Any]) -> None:
    documented = {(method.upper(), shape(path)) for path, ops in spec["paths"].items() for method in ops}

    assert documented == {(route.method, shape(route.path)) for route in ROUTES}


def test_path_parameters_in_a_path_are_the_ones_its_operation_declares(spec: dict[str, Any]) -> None:
    for path, operations in spec["paths"].items():
        for found in operations.values():
            declared = {p["name"] for p in found.get("parameters", []) if p["in"] == "path"}
            assert declared == set(re.findall(r"\{([^}]+)\}", path)), path


def test_operation_ids_are_unique(spec: dict[str, Any]) -> None:
    ids = [found["operationId"] for operations in spec["paths"].values() for found in operations.values()]

    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("route", ROUTES, ids=[route.function for route in ROUTES])
def test_each_route_declares_its_auth_and_every_status_it_can_answer(
    spec: dict[str, Any], route: Any
) -> None:
    responses = operation(spec, route)["responses"]

    assert operation(spec, route)["security"] == ([{"apiKey": []}] if route.auth else [])
    expected = {"200", *map(str, HANDLER_STATUSES), *(map(str, GATEWAY_STATUSES) if route.auth else ())}
    assert set(responses) == expected


def test_validation_errors_are_documented_as_the_error_envelope_they_are(spec: dict[str, Any]) -> None:
    schema = spec["paths"]["/v1/engine/consolidate/"]["post"]["responses"]["422"]["content"][
        "application/json"
    ]["schema"]

    assert schema["required"] == ["errors", "message", "status"]
    assert "HTTPValidationError" not in json.dumps(spec)


def test_a_throttled_answer_documents_retry_after(spec: dict[str, Any]) -> None:
    headers = spec["paths"]["/v1/engine/retrieve/"]["post"]["responses"]["429"]["headers"]

    assert "Retry-After" in headers


def test_a_dialect_envelope_is_described_by_its_own_schema() -> None:
    def game_envelope(status: int, message: str, errors: list[dict[str, Any]]) -> dict[str, Any]:
        return {"code": status, "msg": message, "data": {"errors": errors} if errors else None}

    schema = error_schema(game_envelope)

    assert schema["properties"] == {"code": {"type": "integer"}, "msg": {"type": "string"}, "data": {}}


def test_the_chat_completion_is_documented_as_json_or_an_event_stream(spec: dict[str, Any]) -> None:
    content = spec["paths"]["/v1/chat/completions"]["post"]["responses"]["200"]["content"]

    assert set(content) == {"application/json", "text/event-stream"}


def test_the_cli_writes_the_same_document(tmp_path: Path, spec: dict[str, Any]) -> None:
    out = tmp_path / "openapi.json"

    assert cli.main(["openapi", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == spec
