"""`memory-engine mcp` driven by the MCP SDK's own client, over stdio and streamable HTTP, against a
running local server: the tools remember, recall, forget and list, in Korean and English."""

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

from tests.e2e.conftest import ROOT, LocalServer, free_port
from tests.e2e.doors.conftest import door_env

pytestmark = pytest.mark.e2e
T = TypeVar("T")
MEMORY_ID = re.compile(r"memory (\d{8}_\d{6}_[0-9a-f]{6})")
TRANSPORTS = ["stdio", "http"]


@pytest.fixture(scope="module")
def http_mcp(server: LocalServer) -> Iterator[str]:
    """`memory-engine mcp --transport http` as a process of its own; its endpoint's URL."""
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
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, env=door_env(server), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not _listening(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the MCP server did not start: {process.communicate(timeout=5)[1]}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def connect(request: pytest.FixtureRequest, server: LocalServer) -> Callable[[str], Any]:
    """An MCP client session over the named transport (stdio spawns `memory-engine mcp`)."""

    @asynccontextmanager
    async def session(transport: str) -> AsyncIterator[Client]:
        if transport == "stdio":
            target: Any = StdioServerParameters(
                command=sys.executable,
                args=["-m", "memory_engine_app.cli", "mcp"],
                env=door_env(server),
                cwd=str(ROOT),
            )
        else:
            target = request.getfixturevalue("http_mcp")
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


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_five_tools_are_listed_with_descriptions_and_input_schemas(connect: Any, transport: str) -> None:
    async def work() -> dict[str, Any]:
        async with connect(transport) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    tools = run(work)

    assert set(tools) == {"remember", "recall", "forget", "list_threads", "list_memories"}
    assert all(tool.description for tool in tools.values())
    assert tools["recall"].input_schema["required"] == ["query"]
    assert {"threads", "scope", "max_tokens", "limit"} <= set(tools["recall"].input_schema["properties"])


@pytest.mark.parametrize(
    ("transport", "line", "question", "words"),
    [
        ("stdio", "우리 집 고양이 보리는 회색이고 세 살이야.", "고양이 이름이 뭐야?", "보리"),
        ("http", "My sister Ana moved to Porto last spring.", "Where does my sister live?", "Porto"),
    ],
)
def test_a_remembered_turn_is_recalled_as_a_memory_after_extraction_and_forgotten_on_request(
    connect: Any, transport: str, line: str, question: str, words: str
) -> None:
    thread = f"mcp-{transport}-{uuid.uuid4().hex[:8]}"

    async def work() -> tuple[str, str, str]:
        async with connect(transport) as client:
            # Given a turn remembered in a thread, extracted now
            remembered = await client.call_tool(
                "remember", {"text": line, "thread": thread, "extract_now": True}
            )

            # When the question is recalled once extraction has run
            async def recall() -> str:
                return said(await client.call_tool("recall", {"query": question, "threads": [thread]}))

            recalled = await eventually(recall, r"\[memory \d{8}_")
            memory_id = MEMORY_ID.search(recalled)
            assert memory_id, recalled
            # and that memory is forgotten
            forgot = await client.call_tool("forget", {"memory_id": memory_id.group(1)})
            return said(remembered), recalled, said(forgot) + "\n" + await recall()

    remembered, recalled, after = run(work)

    # Then recall found the memory with its id and score, and no longer finds it
    assert "dialog mcp-" in remembered
    assert words in recalled and "score " in recalled
    forgot_line, recall_after = after.split("\n", 1)
    assert forgot_line.startswith("Forgot memories/")
    assert "[memory " not in recall_after


def test_a_fact_under_a_scope_is_recalled_with_its_name_and_distance(connect: Any) -> None:
    scope = {"user_id": f"mcp-{uuid.uuid4().hex[:8]}"}

    async def work() -> str:
        async with connect("http") as client:
            for fact in ["The user is allergic to peanuts.", "The user plays the cello."]:
                await client.call_tool("remember", {"text": fact, "scope": scope})
            return said(
                await client.call_tool("recall", {"query": "What can the user not eat?", "scope": scope})
            )

    recalled = run(work)

    first = recalled.splitlines()[1]
    assert first.startswith("1. [memories/") and "distance" in first and "peanuts" in first


def test_forgetting_a_dialog_takes_the_memory_made_from_it(connect: Any) -> None:
    thread = f"mcp-cascade-{uuid.uuid4().hex[:8]}"

    async def work() -> str:
        async with connect("http") as client:
            remembered = said(
                await client.call_tool(
                    "remember", {"text": "I keep bees on the roof.", "thread": thread, "extract_now": True}
                )
            )
            dialog = re.search(r"dialog (mcp-[0-9a-f]+)", remembered)
            assert dialog, remembered

            async def listed() -> str:
                return said(await client.call_tool("list_memories", {"thread": thread}))

            await eventually(listed, r"\d{8}_\d{6}_")
            forgot = await client.call_tool("forget", {"dialog_uuid": dialog.group(1), "session": thread})
            return said(forgot) + "\n" + await listed()

    forgot, listed = run(work).split("\n", 1)

    assert re.search(r"deleted memories: \d{8}_\d{6}_[0-9a-f]{6}", forgot), forgot
    assert listed == f"No memories in {thread}."


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_bad_argument_is_an_mcp_error_and_the_server_keeps_serving(connect: Any, transport: str) -> None:
    async def work() -> tuple[CallToolResult, CallToolResult, CallToolResult]:
        async with connect(transport) as client:
            wrong_type = await client.call_tool("recall", {"query": "x", "threads": ["t"], "limit": "many"})
            neither = await client.call_tool("recall", {"query": "x"})
            after = await client.call_tool("list_threads", {})
            return wrong_type, neither, after

    wrong_type, neither, after = run(work)

    assert wrong_type.is_error and "limit" in said(wrong_type)
    assert neither.is_error and "give exactly one of threads, scope" in said(neither)
    assert not after.is_error and "threads" in said(after)


def test_an_argument_the_api_refuses_is_a_tool_error_naming_the_field(connect: Any) -> None:
    async def work() -> CallToolResult:
        async with connect("stdio") as client:
            return await client.call_tool("remember", {"text": "hi", "thread": "t", "language": "x" * 40})

    refused = run(work)

    assert refused.is_error and "language" in said(refused)


def test_list_threads_shows_a_remembered_thread_and_a_scope(connect: Any) -> None:
    thread, scope = f"mcp-list-{uuid.uuid4().hex[:8]}", {"team": f"t-{uuid.uuid4().hex[:6]}"}

    async def work() -> str:
        async with connect("stdio") as client:
            await client.call_tool("remember", {"text": "Standup moves to 10am.", "thread": thread})
            await client.call_tool("remember", {"text": "The team uses Python 3.12.", "scope": scope})
            return said(await client.call_tool("list_threads", {}))

    listed = run(work)

    assert f"- thread {thread}: sessions {thread}" in listed
    assert f'- scope {{"team": "{scope["team"]}"}}: 1 facts' in listed
