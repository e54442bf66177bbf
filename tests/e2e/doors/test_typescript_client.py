"""The TypeScript client (clients/typescript) in `make test`: built (its API types generated from
docs/openapi.json by openapi-typescript, then compiled), its own tests run with Node's test runner
against a running local server, and its web chat back end example run end to end."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e import waits
from tests.e2e.child_output import ChildOutput
from tests.e2e.conftest import API_KEY, ROOT, LocalServer, free_port
from tests.e2e.doors.conftest import door_env
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("npm") is None, reason="the TypeScript client needs Node.js 18+ and npm"),
]
PACKAGE = ROOT / "clients" / "typescript"
CHAT_WAIT_S = 180.0  # how long the test waits for each answer of the example back end
GENERATED = PACKAGE / "src" / "api.ts"


def npm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["npm", *args], cwd=PACKAGE, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def built() -> Path:
    """The package built as `npm ci` (make ts-client) left it: its generated types checked fresh."""
    if not (PACKAGE / "node_modules" / "openapi-typescript").exists():
        installed = npm("ci", "--no-audit", "--no-fund", "--ignore-scripts")
        assert installed.returncode == 0, installed.stderr
    committed = GENERATED.read_text()
    done = npm("run", "build")
    assert done.returncode == 0, done.stdout + done.stderr
    assert GENERATED.read_text() == committed, (
        "src/api.ts is stale: `npm run build` in clients/typescript, commit it"
    )
    return PACKAGE / "dist"


def test_the_typescript_clients_tests_pass_against_a_running_server(built: Path, server: LocalServer) -> None:
    env = {**door_env(server), "MEMORY_ENGINE_URL": server.url, "MEMORY_ENGINE_API_KEY": API_KEY}

    done = subprocess.run(
        ["node", "--test", "test/"], cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=600
    )

    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# skipped 0" in done.stdout


def test_the_chat_back_end_example_remembers_a_user_across_requests(
    built: Path, server: LocalServer, upstream: FakeOpenAIServer
) -> None:
    # Given the example back end, its model a local OpenAI stub, its memory the local server
    port = free_port()
    env = {
        **door_env(server),
        "PORT": str(port),
        "OPENAI_BASE_URL": upstream.base_url,
        "OPENAI_API_KEY": "stub",
        "CHAT_MODEL": "stub-model",
        # Below the test's own wait for an answer: on a host whose cores are busy with other work,
        # a retrieve can take longer than the client's 30 s default, and the example would answer
        # 503 for a request the server was still serving.
        "MEMORY_ENGINE_TIMEOUT_MS": str(int(CHAT_WAIT_S * 1000 * 0.9)),
    }
    output = ChildOutput()  # its log in a file: a pipe read only at the end fills and blocks it
    process = subprocess.Popen(
        ["node", "examples/chat-backend.mjs"], cwd=PACKAGE, env=env, stderr=output.file
    )
    user = f"ts-example-{os.getpid()}-{time.monotonic_ns()}"
    try:
        upstream.script((200, chat_completion("Noted!")), (200, chat_completion("In Porto.")))
        waits.wait_started(lambda: listening(port), process, "the example chat backend")
        # When a user tells it something, then asks about it
        first = chat(port, user, "My sister Ana lives in Porto.")
        second = chat(port, user, "Where does Ana live?")
    finally:
        process.terminate()
        process.wait(timeout=30)
        logged = output.text()
        output.close()
    # Then each got a reply, and the question went upstream with what the user said before
    assert "reply" in first and "reply" in second, (first, second, logged[-4000:])
    [asked] = [r for r in upstream.requests if r["messages"][-1]["content"] == "Where does Ana live?"]
    remembered = asked["messages"][1]["content"]
    assert "What you remember about me" in remembered and "Ana lives in Porto" in remembered


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def chat(port: int, user: str, message: str) -> dict[str, str]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/chat",
        data=json.dumps({"user": user, "message": message}).encode(),
        method="POST",
    )
    try:
        response = urllib.request.urlopen(request, timeout=CHAT_WAIT_S)
    except urllib.error.HTTPError as refused:  # the example's error answer, with its reason
        return {"status": str(refused.code), **json.loads(refused.read() or b"{}")}
    with response:
        answer: dict[str, str] = json.loads(response.read())
        return answer
