"""GET /v1/export fed its sample event (and variations): pages of the key's records, a 422 naming
a bad parameter."""

from __future__ import annotations

import copy
import json
from typing import Any

from functions.export.handler import lambda_handler
from memory_engine.engine import Engine
from memory_engine.models.export import ExportRecord, Selection
from memory_engine.usecases import export
from memory_engine_app.server.apigw import LocalContext
from tests.handlers.conftest import Invoke, load_event
from tests.handlers.test_inspect_handlers import consolidate


def query(**params: str) -> tuple[int, dict[str, Any]]:
    """The sample event with exactly these query parameters (none: the whole key)."""
    event = copy.deepcopy(load_event("export"))
    event["queryStringParameters"] = params or None
    event["multiValueQueryStringParameters"] = {name: [value] for name, value in params.items()} or None
    result = lambda_handler(event, LocalContext())
    return result["statusCode"], json.loads(result["body"])


def walk(**params: str) -> list[dict[str, Any]]:
    """Every page of the route, following next_cursor."""
    records: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        status, body = query(**params, **({"cursor": cursor} if cursor else {}))
        assert status == 200, body
        records += body["records"]
        cursor = body.get("next_cursor")
        if cursor is None:
            assert "next_cursor" not in body  # absent on the last page, not null
            return records


def test_the_route_pages_the_thread_of_its_sample_event(invoke: Invoke, engine: Engine) -> None:
    consolidate(invoke, 3)
    assert invoke("bank_create")[0] == 200

    records = walk(thread="thread-1")

    assert [record["kind"] for record in records] == ["session", "turn", "turn", "turn"]
    assert all(record["version"] == 1 and "tenant" not in record for record in records)


def test_the_whole_key_as_the_route_gives_it_is_what_the_cli_writes(invoke: Invoke, engine: Engine) -> None:
    consolidate(invoke, 2)
    assert invoke("bank_create")[0] == 200

    by_route = walk()
    by_cli = [record.model_dump(mode="json") for record in export.walk(engine.store, "tenant-a", Selection())]

    assert by_route == by_cli
    assert [ExportRecord.model_validate(record).kind for record in by_route].count("memory") == 1


def test_another_key_exports_nothing_of_this_one(invoke: Invoke, engine: Engine) -> None:
    consolidate(invoke, 2)
    assert engine.store.list_sessions("tenant-b") == []
    assert export.page(engine.store, "tenant-b", Selection()).records == []


def test_bad_parameters_are_422s_naming_them(invoke: Invoke) -> None:
    for params, field in (
        ({"scope": "not json"}, "scope"),
        ({"scope": json.dumps({"user_id": "1"}), "thread": "t"}, "thread"),
        ({"cursor": "garbage"}, "cursor"),
    ):
        status, body = query(**params)
        assert status == 422, (params, body)
        assert field in json.dumps(body), (params, body)
