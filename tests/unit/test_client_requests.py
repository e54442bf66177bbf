"""What the Python client sends: every route of the route table, the key and URL it is given or
finds in the environment, and requests checked against the API's own models before sending."""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

import httpx
import pytest

from functions.routes import REST_ROUTES
from memory_engine_client import (
    ApiError,
    AsyncMemoryEngine,
    Call,
    InvalidRequest,
    MemoryEngine,
    Unauthorized,
    bank,
    export,
    inspector,
    native,
)
from memory_engine_client.transport import Connection

USERID = "7f3c2a9e-4b1d-4c8e-9a6f-2d5e8b1c0f47"
# One call of each builder, with arguments the API's models accept.
CALLS: list[Call[Any]] = [
    export.export_page(thread="t1"),
    native.health(),
    native.consolidate("s1", "t1", {"uuid": "d1", "query": "q"}),
    native.retrieve("t1", "q", max_tokens=100),
    native.delete("s1", "d1"),
    native.fork("s1", "s2", "d1"),
    native.embed(["a", "b"], mode="passage"),
    bank.bank_create("fact", {"user_id": "1"}),
    bank.bank_get("memories/20260101_000000_abcdef"),
    bank.bank_delete("20260101_000000_abcdef"),
    bank.bank_correct("memories/20260101_000000_abcdef", "The user lives in Seoul."),
    bank.bank_retire("20260101_000000_abcdef"),
    bank.bank_revisions("memories/20260101_000000_abcdef"),
    bank.key_facts("memories/20260101_000000_abcdef"),
    bank.correct_key_fact("memories/20260101_000000_abcdef", 0, "Max is a corgi."),
    bank.retire_key_fact("memories/20260101_000000_abcdef", 1),
    bank.bank_search({"user_id": "1"}, "q", top_k=2),
    bank.bank_list({"user_id": "1"}, page_size=10),
    bank.bank_generate({"user_id": "1"}, ["I like tea."]),
    bank.forget_user(USERID),
    bank.chat_completion({"messages": [{"role": "user", "content": "hi"}], "userid": USERID}),
    bank.list_models(),
    bank.game_memory("s1"),
    bank.game_record("s1", [{"npc_id": "smith", "message": "hi"}]),
    inspector.list_threads(),
    inspector.show_session("s1"),
    inspector.list_memories("t1", limit=5),
    inspector.show_queue(),
    inspector.preview_delete("s1", "d1"),
    inspector.force_extract("s1"),
]


def route_pattern(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$")


def recording(answer: Any = None) -> tuple[MemoryEngine, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=answer if answer is not None else {"status": "ok"})

    return MemoryEngine("http://api.test/prod", "secret", transport=httpx.MockTransport(respond)), seen


def test_every_route_the_api_gateway_serves_has_a_client_call() -> None:
    sent = {(call.method, call.path) for call in CALLS}

    missing = [
        f"{route.method} {route.path}"
        for route in REST_ROUTES
        if not any(method == route.method and route_pattern(route.path).match(path) for method, path in sent)
    ]

    assert missing == []


def test_the_key_and_the_stage_path_come_from_the_arguments() -> None:
    engine, seen = recording({"status": "success", "threads": [], "scopes": []})

    engine.send(inspector.list_threads())

    (request,) = seen
    assert str(request.url) == "http://api.test/prod/v1/inspect/threads"
    assert request.headers["Authorization"] == "Bearer secret"


def test_the_url_and_key_come_from_the_environment_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_URL", "https://memory.example/dev/")
    monkeypatch.setenv("MEMORY_ENGINE_API_KEY", "from-env")

    engine = MemoryEngine()

    assert engine.connection.url == "https://memory.example/dev"
    assert engine.connection.api_key == "from-env"


def test_without_a_key_a_route_that_needs_one_fails_before_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_API_KEY", raising=False)
    engine, seen = recording()
    engine.connection = Connection("http://api.test", None)

    with pytest.raises(Unauthorized, match="MEMORY_ENGINE_API_KEY"):
        engine.retrieve("t1", "q")

    assert seen == []


def test_health_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_API_KEY", raising=False)
    engine = MemoryEngine(
        "http://api.test",
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"status": "ok", "service": "x"})),
    )

    assert engine.health().service == "x"


def test_a_request_the_api_would_refuse_is_refused_before_sending_naming_the_field() -> None:
    engine, seen = recording()

    with pytest.raises(InvalidRequest) as raised:
        engine.retrieve(["t1"], "q", limit=500)

    assert raised.value.fields == ["options.limit"] and seen == []


def test_only_the_arguments_given_are_sent_so_the_api_applies_its_defaults() -> None:
    engine, seen = recording({"status": "success", "message": None})

    engine.consolidate("s1", "t1", {"uuid": "d1", "query": "q"}, force_summary=True)

    assert json.loads(seen[0].content) == {
        "session_uuid": "s1",
        "parent_session_uuid": "t1",
        "new_dialog": {"uuid": "d1", "query": "q"},
        "options": {"force_summary": True},
    }


def test_a_conversation_is_sent_in_order_and_only_its_last_turn_forces_extraction() -> None:
    engine, seen = recording({"status": "success", "message": None})
    turns = [{"uuid": f"d{n}", "query": f"line {n}"} for n in range(3)]

    sent = engine.consolidate_conversation("s1", "t1", turns, language="en", extract_at_end=True)

    bodies = [json.loads(request.content) for request in seen]
    assert sent == 3
    assert [body["new_dialog"]["uuid"] for body in bodies] == ["d0", "d1", "d2"]
    assert [body.get("options") for body in bodies] == [None, None, {"force_summary": True}]


def test_an_answer_the_response_model_cannot_read_is_an_api_error_naming_the_route() -> None:
    engine, _ = recording({"status": "ok"})

    with pytest.raises(ApiError, match="GET /v1/inspect/threads answered 200"):
        engine.list_threads()


def test_a_conversation_with_a_bad_turn_sends_nothing() -> None:
    engine, seen = recording()

    with pytest.raises(InvalidRequest, match="query"):
        engine.consolidate_conversation("s1", "t1", [{"uuid": "d0", "query": "ok"}, {"uuid": "d1"}])

    assert seen == []


def test_listing_a_whole_scope_follows_the_page_tokens() -> None:
    memory = {"name": "memories/m", "fact": "f", "scope": {"u": "1"}, "createTime": "t", "updateTime": "t"}
    pages = [
        {"retrieved_memories": [{"memory": memory | {"name": "memories/a"}}], "next_page_token": "p2"},
        {"retrieved_memories": [{"memory": memory | {"name": "memories/b"}}]},
    ]
    seen: list[dict[str, Any]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=pages[len(seen) - 1])

    engine = MemoryEngine("http://api.test", "k", transport=httpx.MockTransport(respond))

    found = engine.bank_list_all({"u": "1"}, page_size=1)

    assert [memory.name for memory in found] == ["memories/a", "memories/b"]
    assert seen[1]["simple_retrieval_params"] == {"page_size": 1, "page_token": "p2"}


def test_every_call_builder_is_a_method_of_both_clients() -> None:
    builders = {
        name
        for module in (native, bank, inspector)
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")
    }

    missing = sorted(
        f"{client.__name__}.{name}"
        for client in (MemoryEngine, AsyncMemoryEngine)
        for name in builders
        if not callable(getattr(client, name, None))
    )

    assert "retrieve" in builders and missing == []


def test_expiry_arguments_are_sent_as_the_api_names_them() -> None:
    temporary = bank.bank_create("The user is in Busan.", {"user_id": "1"}, ttl_seconds=3600)
    until = bank.bank_create("The user is in Busan.", {"user_id": "1"}, expires_at="2030-01-01T00:00:00Z")
    turn = native.consolidate("s1", "t1", {"uuid": "d1", "query": "q"}, memory_ttl_seconds=60)

    assert temporary.body == {"fact": "The user is in Busan.", "scope": {"user_id": "1"}, "ttl_seconds": 3600}
    assert until.body is not None and until.body["expires_at"].startswith("2030-01-01T00:00:00")
    assert turn.body is not None and turn.body["options"] == {"memory_ttl_seconds": 60}
    with pytest.raises(InvalidRequest):
        bank.bank_create("A fact.", {"user_id": "1"}, ttl_seconds=0)
