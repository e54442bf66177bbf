"""Values are taken as sent, never coerced: a boolean where a number belongs (or the reverse), or a
number sent as a string, is a 422 naming the field, in the envelope of the route's dialect; a
timestamp has one rule (models.timestamps); and `null` is a field not given, on every route."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from functions.routes import ROUTES
from memory_engine.engine import Engine
from tests.handlers.conftest import EVENTS
from tests.handlers.dialects import Answer, call, sample_body

pytestmark = pytest.mark.usefixtures("engine")


def with_value(function: str, path: str, value: Any) -> dict[str, Any]:
    """The function's sample body with `value` at the dotted `path` (created where missing)."""
    body: dict[str, Any] = sample_body(function)
    *parents, name = path.split(".")
    node = body
    for part in parents:
        node = node.setdefault(part, {})
    node[name] = value
    return body


def named_fields(answer: Answer) -> list[str]:
    """The fields a 422 names, whatever the dialect's envelope."""
    body = answer.json
    if "error" in body:  # OpenAI's
        return [body["error"]["param"]]
    errors = body["errors"] if "errors" in body else (body.get("data") or {}).get("errors", [])
    return [error["field"] for error in errors]


COERCIONS = [
    ("consolidate", "options.length_limit", True),
    ("consolidate", "options.length_limit", "500"),
    ("consolidate", "options.force_summary", "yes"),
    ("consolidate", "options.force_summary", 1),
    ("consolidate", "new_dialog.query", 5),
    ("retrieve", "options.max_tokens", True),
    ("retrieve", "options.limit", True),
    ("retrieve", "options.limit", "5"),
    ("retrieve", "options.limit", 5.0),
    ("retrieve", "options.explain", "true"),
    ("fork", "cutoff_dialog_uuid", 1),
    ("delete", "dialog_uuid", 1),
    ("embed", "text", 5),
    ("game_memory", "page_size", True),
    ("game_memory", "page_size", "10"),
    ("game_record_memory", "session_id", 1),
    ("bank_create", "fact", 5),
    ("bank_retrieve", "similarity_search_params.top_k", True),
    ("bank_retrieve", "similarity_search_params.top_k", "3"),
    ("bank_generate", "language", 1),
    ("chat_completions", "stream", "yes"),
    ("chat_completions", "stream", 1),
    ("chat_completions", "model", 4),
    ("inspect_extract", "session_uuid", 7),
]


@pytest.mark.parametrize(("function", "path", "value"), COERCIONS)
def test_a_value_of_the_wrong_json_type_is_a_422_naming_it(function: str, path: str, value: Any) -> None:
    # Given a request whose field holds a value pydantic's lax mode would have converted
    body = with_value(function, path, value)
    # When it is sent
    answer = call(function, body)
    # Then it is refused, naming that field in the dialect's envelope
    assert answer.status == 422, answer.text
    assert path in named_fields(answer), answer.text


def test_the_right_types_still_pass_on_every_dialect() -> None:
    assert call("consolidate", with_value("consolidate", "options.length_limit", 500)).status == 200
    assert call("retrieve", with_value("retrieve", "options.max_tokens", 200)).status == 200
    assert call("game_memory", with_value("game_memory", "page_size", 10)).status in (200, 404)
    top_k = with_value("bank_retrieve", "similarity_search_params.top_k", 3)
    assert call("bank_retrieve", top_k).status == 200


def consolidate_at(timestamp: Any) -> Answer:
    return call("consolidate", with_value("consolidate", "new_dialog.timestamp", timestamp))


@pytest.mark.parametrize(
    "timestamp",
    [
        20000000001,  # year 2603 in seconds: pydantic took it for milliseconds (1970)
        "0000-01-01T00:00:00Z",
        "1999-12-31T23:59:59Z",
        946684799,  # one second before 2000
        "1773806437",  # seconds as a string
        True,
        (datetime.now(UTC) + timedelta(days=2)).isoformat(),
    ],
)
def test_a_timestamp_outside_the_rule_is_a_422_naming_it(timestamp: Any) -> None:
    answer = consolidate_at(timestamp)

    assert answer.status == 422, answer.text
    assert named_fields(answer) == ["new_dialog.timestamp"]


def test_a_timestamp_in_milliseconds_is_refused_with_the_seconds_it_meant() -> None:
    answer = consolidate_at(1683554160000)

    assert answer.status == 422
    assert "milliseconds" in answer.json["message"] and "1683554160" in answer.json["message"]


@pytest.mark.parametrize(
    "timestamp", [946684800, "2000-01-01T00:00:00Z", 1683554160, 1683554160.5, "2023-05-08"]
)
def test_a_timestamp_inside_the_rule_is_stored(timestamp: Any) -> None:
    assert consolidate_at(timestamp).status == 200


def test_a_recent_dialog_echoed_with_a_millisecond_timestamp_is_refused_too() -> None:
    body = sample_body("retrieve")
    body["recent_dialogs"] = [{"uuid": "dialog-1", "timestamp": 1701139538000}]

    answer = call("retrieve", body)

    assert answer.status == 422 and "recent_dialogs.0.timestamp" in named_fields(answer)


def object_fields(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every member of every JSON object in `value`."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, child in value.items():
            found += [(*path, key), *object_fields(child, (*path, key))]
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += object_fields(child, (*path, index))
    return found


def changed(body: Any, where: tuple[Any, ...], null: bool) -> Any:
    """A copy of `body` with the member at `where` set to null, or removed."""
    copy = json.loads(json.dumps(body))
    parent = copy
    for part in where[:-1]:
        parent = parent[part]
    if null:
        parent[where[-1]] = None
    else:
        del parent[where[-1]]
    return copy


BODIES = sorted(route.function for route in ROUTES if (EVENTS / f"{route.function}.json").is_file()
                and json.loads((EVENTS / f"{route.function}.json").read_text()).get("body"))  # fmt: skip


@pytest.mark.parametrize("function", sorted(set(BODIES)))
def test_a_field_sent_as_null_is_answered_as_a_field_not_given(function: str) -> None:
    # Given the route's sample body (after a first turn, so the sample's session exists)
    call("consolidate")
    body = sample_body(function)
    differ: list[str] = []
    # When each member of each object in it is sent as null, and then left out
    for where in object_fields(body):
        as_null, left_out = (
            call(function, changed(body, where, True)),
            call(function, changed(body, where, False)),
        )
        # Then both get the same answer: the field's default, or the same refusal
        if as_null.status != left_out.status:
            differ.append(f"{'.'.join(map(str, where))}: null {as_null.status}, absent {left_out.status}")
    assert differ == []


def test_a_required_field_sent_as_null_is_reported_required_and_an_optional_one_takes_its_default(
    engine: Engine,
) -> None:
    # Given a turn with a null query (required) and, once fixed, a null user_name and options
    missing = call("consolidate", with_value("consolidate", "new_dialog.query", None))
    body = with_value("consolidate", "user_name", None) | {"options": None}
    # When each is consolidated
    stored = call("consolidate", body)
    # Then the first names the field as required, and the second is stored with the defaults
    assert missing.status == 422
    assert missing.json["errors"] == [{"field": "new_dialog.query", "message": "is required"}]
    [turn] = engine.store.list_turns("tenant-a", body["session_uuid"])
    assert stored.status == 200 and (turn.user_name, turn.length_limit) == ("당신", 1000)
