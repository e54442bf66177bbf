"""`memory-engine mcp` driven by the MCP SDK's own client, over stdio and streamable HTTP, against a
running local server: one user's memory bound at start, so `remember(text)` and `recall(query)`
work alone; strict arguments; the HTTP door open to no stranger."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from tests.e2e import waits
from tests.e2e.child_output import ChildOutput
from tests.e2e.conftest import API_KEY, ROOT, LocalServer, free_port
from tests.e2e.doors.conftest import door_env

pytestmark = pytest.mark.e2e
T = TypeVar("T")
MEMORY_ID = re.compile(r"memory (\d{8}_\d{6}_[0-9a-f]{6})")
TRANSPORTS = ["stdio", "http"]


HTTP_THREAD = f"mcp-http-{uuid.uuid4().hex[:8]}"
HTTP_TOKEN = "mcp-door-token"


def start_http(
    server: LocalServer, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], int, ChildOutput]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "memory_engine_app.cli",
        "mcp",
        "--transport",
        "http",
        "--port",
        str(port),
        *args,
    ]
    output = ChildOutput()  # its log in a file: a pipe read only at the end fills and blocks it
    process = subprocess.Popen(
        command, cwd=ROOT, env={**door_env(server), **(env or {})}, stdout=subprocess.DEVNULL,
        stderr=output.file, text=True,
    )  # fmt: skip
    try:
        waits.wait_started(lambda: _listening(port), process, "the MCP server")
    except RuntimeError as failed:
        process.kill()
        process.wait(timeout=5)
        raise RuntimeError(f"{failed}: {output.text()}") from None
    return process, port, output


@pytest.fixture(scope="module")
def http_mcp(server: LocalServer) -> Iterator[str]:
    """`memory-engine mcp --transport http` bound to one thread, with its own token; its URL."""
    process, port, output = start_http(
        server, "--thread", HTTP_THREAD, env={"MEMORY_ENGINE_MCP_TOKEN": HTTP_TOKEN}
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)
        output.close()


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def connect(request: pytest.FixtureRequest, server: LocalServer) -> Callable[..., Any]:
    """An MCP client session over the named transport; stdio spawns `memory-engine mcp` with the
    given options (the user it binds), HTTP reaches the module's server with its token."""

    @asynccontextmanager
    async def session(transport: str, *options: str) -> AsyncIterator[Client]:
        if transport == "stdio":
            target: Any = StdioServerParameters(
                command=sys.executable,
                args=["-m", "memory_engine_app.cli", "mcp", *options],
                env=door_env(server),
                cwd=str(ROOT),
            )
        else:
            import httpx2  # the MCP SDK's own HTTP client
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {HTTP_TOKEN}"}, timeout=60)
            target = streamable_http_client(request.getfixturevalue("http_mcp"), http_client=http)
        async with Client(target, read_timeout_seconds=60) as client:
            yield client

    return session


def run(work: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(asyncio.wait_for(work(), timeout=240))


def said(result: CallToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextContent))


async def eventually(probe: Callable[[], Awaitable[str]], pattern: str, seconds: float = 90) -> str:
    """Call the probe until its answer matches (background extraction), failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        answer = await probe()
        if re.search(pattern, answer):
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(f"never matched {pattern!r}; last answer: {answer}")
        await asyncio.sleep(0.3)


TOOLS = {"remember", "recall", "list_memories", "get_memory", "forget", "forget_all", "extraction_status"}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_tools_are_listed_with_strict_input_schemas_and_no_thread_to_invent(
    connect: Any, transport: str
) -> None:
    async def work() -> tuple[dict[str, Any], str]:
        async with connect(transport) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            return listed, ""

    tools, _ = run(work)

    assert set(tools) == TOOLS
    assert all(tool.description for tool in tools.values())
    assert tools["recall"].input_schema["required"] == ["query"]
    assert tools["remember"].input_schema["required"] == ["text"]
    assert all(tool.input_schema.get("additionalProperties") is False for tool in tools.values())
    assert not any(
        {"thread", "threads", "scope"} & set(tool.input_schema["properties"]) for tool in tools.values()
    )


@pytest.mark.parametrize(
    ("transport", "line", "question", "words"),
    [
        ("stdio", "우리 집 고양이 보리는 회색이고 세 살이야.", "고양이 이름이 뭐야?", "보리"),
        ("http", "My sister Ana moved to Porto last spring.", "Where does my sister live?", "Porto"),
    ],
)
def test_remember_and_recall_alone_keep_one_users_memories_in_the_bound_thread(
    server: LocalServer, connect: Any, transport: str, line: str, question: str, words: str
) -> None:
    thread = HTTP_THREAD if transport == "http" else f"mcp-stdio-{uuid.uuid4().hex[:8]}"
    options = () if transport == "http" else ("--thread", thread)

    async def work() -> tuple[str, str, str, str]:
        async with connect(transport, *options) as client:
            # Given turns remembered with the text alone, the last one extracted now
            await client.call_tool("remember", {"text": "Hello there."})
            remembered = await client.call_tool("remember", {"text": line, "extract_now": True})

            # When the question is recalled (the query alone) once extraction has run
            async def recall() -> str:
                return said(await client.call_tool("recall", {"query": question}))

            recalled = await eventually(recall, r"\[memory \d{8}_")
            memory_id = MEMORY_ID.search(recalled)
            assert memory_id, recalled
            listed = said(await client.call_tool("list_memories", {}))
            # and that memory is forgotten
            forgot = said(await client.call_tool("forget", {"memory_id": memory_id.group(1)}))
            return said(remembered), recalled, listed, forgot + "\n" + await recall()

    remembered, recalled, listed, after = run(work)

    # Then every turn went to the bound thread, one session, and recall found the memory
    sessions = [t.sessions for t in server.client().list_threads().threads if t.thread == thread]
    assert [[s.session_uuid for s in found] for found in sessions] == [[thread]]
    counts = server.client().show_session(thread).counts
    assert (counts.buffered, counts.forgotten) == (0, 2)  # both turns extracted; the memory forgotten
    assert "turn mcp-" in remembered and "extraction is queued" in remembered
    assert words in recalled and "score " in recalled
    assert MEMORY_ID.search(recalled).group(1) in listed  # type: ignore[union-attr]
    forgot_line, recall_after = after.split("\n", 1)
    assert forgot_line.startswith("Forgot memories/")
    assert "[memory " not in recall_after


@pytest.mark.parametrize(
    ("line", "speaker"), [("I keep bees on the roof.", "User"), ("나는 옥상에서 벌을 키워.", "당신")]
)
def test_an_unnamed_speaker_is_labelled_in_the_language_of_the_turn(
    server: LocalServer, connect: Any, line: str, speaker: str
) -> None:
    thread = f"mcp-speaker-{uuid.uuid4().hex[:8]}"

    async def work() -> None:
        async with connect("stdio", "--thread", thread) as client:
            await client.call_tool("remember", {"text": line})

    run(work)

    [turn] = server.client().show_session(thread).turns
    assert turn.user_name == speaker


def test_a_named_user_and_language_bound_at_start_label_every_turn(server: LocalServer, connect: Any) -> None:
    thread = f"mcp-named-{uuid.uuid4().hex[:8]}"

    async def work() -> None:
        async with connect("stdio", "--thread", thread, "--user-name", "Alex", "--language", "en") as client:
            await client.call_tool("remember", {"text": "보리는 고양이야."})

    run(work)

    shown = server.client().show_session(thread)
    assert shown.turns[0].user_name == "Alex" and shown.session.language == "en"


def test_list_memories_shows_the_turns_recall_finds_before_extraction(connect: Any) -> None:
    thread = f"mcp-buffered-{uuid.uuid4().hex[:8]}"

    async def work() -> tuple[str, str, str, str]:
        async with connect("stdio", "--thread", thread) as client:
            remembered = said(
                await client.call_tool("remember", {"text": "Standup moves to 10am on Fridays."})
            )
            recalled = said(await client.call_tool("recall", {"query": "When is standup?"}))
            listed = said(await client.call_tool("list_memories", {}))
            dialog = re.search(r"turn (mcp-[0-9a-f]+)", remembered)
            assert dialog, remembered
            got = said(await client.call_tool("get_memory", {"memory_id": dialog.group(1)}))
            status = said(await client.call_tool("extraction_status", {}))
            return dialog.group(1), recalled, listed + "\n" + got, status

    dialog, recalled, listed, status = run(work)

    assert f"recent turn {dialog}" in recalled
    assert dialog in listed and "Standup moves to 10am" in listed
    assert "1 turns wait for extraction, 0 were extracted" in status


def test_forget_all_removes_every_turn_and_memory_of_the_bound_thread(
    server: LocalServer, connect: Any
) -> None:
    thread = f"mcp-forget-all-{uuid.uuid4().hex[:8]}"

    async def work() -> tuple[CallToolResult, str, str]:
        async with connect("stdio", "--thread", thread) as client:
            await client.call_tool("remember", {"text": "I keep bees on the roof."})
            await client.call_tool("remember", {"text": "My bees make linden honey.", "extract_now": True})
            await eventually(lambda: _status(client), r"0 turns wait")
            refused = await client.call_tool("forget_all", {"confirm": False})
            forgot = said(await client.call_tool("forget_all", {"confirm": True}))
            return refused, forgot, said(await client.call_tool("list_memories", {}))

    refused, forgot, listed = run(work)

    assert refused.is_error and "confirm" in said(refused)
    assert forgot.startswith("Forgot 2 turns and 1 memories")
    assert listed.startswith("Nothing kept") and server.client().list_memories(thread).memories == []


async def _status(client: Client) -> str:
    return said(await client.call_tool("extraction_status", {}))


def test_a_scope_bound_at_start_keeps_facts_and_recall_fits_max_tokens(connect: Any) -> None:
    scope = f"user_id=mcp-{uuid.uuid4().hex[:8]}"

    async def work() -> tuple[str, str]:
        async with connect("stdio", "--scope", scope) as client:
            for fact in ["The user is allergic to peanuts.", "The user plays the cello in an orchestra."]:
                await client.call_tool("remember", {"text": fact})
            wide = said(await client.call_tool("recall", {"query": "What can the user not eat?"}))
            narrow = said(
                await client.call_tool("recall", {"query": "What can the user not eat?", "max_tokens": 50})
            )
            return wide, narrow

    wide, narrow = run(work)

    first = wide.splitlines()[1]
    assert first.startswith("1. [memories/") and "distance" in first and "peanuts" in first
    assert "cello" in wide and "cello" not in narrow and "over max_tokens=50" in narrow


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"query": "x", "limit": "5"}, "limit"),
        ({"query": "x", "limit": True}, "limit"),
        ({"query": "x", "thread": "someone-else"}, "thread"),
        ({"query": 5}, "query"),
    ],
)
def test_a_mistyped_or_unknown_argument_is_refused_naming_it_and_the_server_keeps_serving(
    connect: Any, transport: str, arguments: dict[str, Any], named: str
) -> None:
    async def work() -> tuple[CallToolResult, CallToolResult]:
        async with connect(transport) as client:
            refused = await client.call_tool("recall", arguments)
            return refused, await client.call_tool("extraction_status", {})

    refused, after = run(work)

    assert refused.is_error and named in said(refused)
    assert not after.is_error


def test_a_client_side_refusal_is_a_tool_error_with_its_reason(connect: Any) -> None:
    async def work() -> CallToolResult:
        async with connect("stdio", "--scope", "user_id=mcp-refusal") as client:
            return await client.call_tool("forget", {"memory_id": "a/b"})

    refused = run(work)

    assert refused.is_error and "not a memory name or id: 'a/b'" in said(refused)


# -- the HTTP door ------------------------------------------------------------------------------


def post_initialize(url: str, headers: dict[str, str]) -> int:
    import httpx

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    return httpx.post(url, json=body, headers={**accept, **headers}, timeout=30).status_code


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Bearer {API_KEY}"}],
    ids=["none", "wrong", "key"],
)
def test_the_http_door_refuses_a_request_without_its_token(http_mcp: str, headers: dict[str, str]) -> None:
    # (its own token is set: the engine key is not it)
    assert post_initialize(http_mcp, headers) == 401


def test_the_http_door_serves_its_token_and_refuses_a_rebound_host(http_mcp: str) -> None:
    token = {"Authorization": f"Bearer {HTTP_TOKEN}"}

    assert post_initialize(http_mcp, token) == 200
    assert post_initialize(http_mcp, {**token, "Host": "evil.example"}) in (400, 421)
    assert post_initialize(http_mcp, {**token, "Origin": "http://evil.example"}) in (400, 403)


def test_bound_off_loopback_it_warns_and_keeps_checking_hosts(server: LocalServer) -> None:
    process, port, output = start_http(server, "--host", "0.0.0.0", "--allowed-host", "memory.internal")
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        key = {"Authorization": f"Bearer {API_KEY}"}  # no token of its own: the engine key is it
        allowed = post_initialize(url, {**key, "Host": f"memory.internal:{port}"})
        rebound = post_initialize(url, {**key, "Host": "attacker.example"})
    finally:
        process.terminate()
        process.wait(timeout=30)
        stderr = output.text()
        output.close()

    assert allowed == 200 and rebound in (400, 421)
    assert "not on loopback" in stderr
