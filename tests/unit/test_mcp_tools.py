"""The MCP server's tools in process, over a client whose API is httpx's MockTransport: what each
tool sends for the user bound at start, and how a refusal becomes a tool error with its reason."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

pytest.importorskip("mcp")
from mcp.server.mcpserver.exceptions import ToolError

from memory_engine_client import AsyncMemoryEngine
from memory_engine_mcp.identity import Identity, identity_from, parse_scope
from memory_engine_mcp.server import build_server

CONSOLIDATED = {"status": "success", "message": None, "extraction_queued": False, "buffered": 1}


def tools(identity: Identity, sent: list[tuple[str, Any]], answer: Any = CONSOLIDATED) -> Any:
    def respond(request: httpx.Request) -> httpx.Response:
        sent.append((request.url.path, json.loads(request.content) if request.content else None))
        return httpx.Response(200, json=answer)

    transport = httpx.MockTransport(respond)
    return build_server(identity, lambda: AsyncMemoryEngine("http://api.test", "key", transport=transport))


def call(server: Any, name: str, arguments: dict[str, Any]) -> Any:
    return asyncio.run(server.call_tool(name, arguments))


def test_remember_sends_the_text_alone_to_the_bound_thread_in_its_language() -> None:
    # Given a server bound to thread "alex" and no name or language
    sent: list[tuple[str, Any]] = []
    server = tools(Identity(thread="alex"), sent)
    # When an English line and a Korean line are remembered with the text alone
    call(server, "remember", {"text": "I keep bees."})
    call(server, "remember", {"text": "나는 벌을 키워."})
    # Then both went to the bound thread's session, English labelled "User", Korean the engine's default
    (path, english), (_, korean) = sent
    assert path == "/v1/engine/consolidate/"
    assert (english["session_uuid"], english["parent_session_uuid"]) == ("alex", "alex")
    assert (english["language"], english["user_name"]) == ("en", "User")
    assert korean["language"] == "ko" and "user_name" not in korean


def test_recall_asks_for_a_default_token_budget() -> None:
    sent: list[tuple[str, Any]] = []
    server = tools(Identity(thread="alex"), sent, {"status": "success", "data": []})

    call(server, "recall", {"query": "bees?"})

    [(path, body)] = sent
    assert path == "/v1/engine/retrieve/" and body["parent_session_uuids"] == ["alex"]
    assert body["options"]["max_tokens"] == 1000


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"query": "x", "limit": "5"}, "limit"),
        ({"query": "x", "limit": True}, "limit"),
        ({"query": "x", "thread": "t"}, "thread"),
    ],
)
def test_a_mistyped_or_unknown_argument_is_refused_naming_it(arguments: dict[str, Any], named: str) -> None:
    sent: list[tuple[str, Any]] = []
    server = tools(Identity(), sent)

    with pytest.raises(ToolError, match=named):
        call(server, "recall", arguments)
    assert sent == []


def test_text_the_api_could_never_read_is_a_tool_error_naming_the_field() -> None:
    # Given a turn holding half an emoji (a lone surrogate, as a JSON escape can carry)
    sent: list[tuple[str, Any]] = []
    server = tools(Identity(thread="alex"), sent)
    # When it is remembered, Then the tool error names the argument and nothing was sent
    with pytest.raises(ToolError, match=r"(?s)remember.*text.*unicode string"):
        call(server, "remember", {"text": "half an emoji \ud83d"})
    assert sent == []


def test_a_scope_is_read_as_pairs_or_json_and_a_wrong_one_is_refused() -> None:
    assert parse_scope("user_id=42, app=notes") == {"user_id": "42", "app": "notes"}
    assert parse_scope('{"user_id": "42"}') == {"user_id": "42"}
    with pytest.raises(ValueError, match="--scope"):
        parse_scope("user_id")


def test_the_identity_comes_from_arguments_then_the_environment() -> None:
    environ = {"MEMORY_ENGINE_MCP_THREAD": "env-thread", "MEMORY_ENGINE_MCP_LANGUAGE": "en"}

    bound = identity_from(user_name="Alex", environ=environ)

    assert (bound.thread, bound.session_uuid, bound.language, bound.user_name) == (
        "env-thread", "env-thread", "en", "Alex",
    )  # fmt: skip
    assert identity_from(thread="arg", environ=environ).thread == "arg"
