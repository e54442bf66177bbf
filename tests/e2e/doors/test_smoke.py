"""`memory-engine smoke` against `make run`'s server (its chat upstream a local stub): it passes, says
what it checked with timings, leaves nothing behind, and fails loudly with a wrong key; it passes
too against a server whose index shows writes late, as OpenSearch's does. (Against
`make run-aws-local`, whose index shows writes late too: tests/e2e/test_aws_local.py.)"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from memory_engine_client import NotFound
from tests.e2e.conftest import API_KEY, ROOT, LocalServer
from tests.e2e.doors.conftest import door_env
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion

pytestmark = pytest.mark.e2e
CHECKS = [
    "health",
    "consolidate past the threshold",
    "wait for extraction",
    "retrieve with evidence and max_tokens",
    "fork at turn 10",
    "delete turn 3 with cascade",
    "bank create / search / delete",
    "forget a chat user",
    "chat with memory",
    "clean up",
]


# Seconds per request: the client's 30 s default is API Gateway's bound; a local server on a host
# whose cores are both busy answered a health check later than that (issue 42).
REQUEST_TIMEOUT_S = "90"


def smoke(server: LocalServer, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "memory_engine_app.cli", "smoke", "--api", server.url,
        "--timeout", REQUEST_TIMEOUT_S, *args,
    ]  # fmt: skip
    return subprocess.run(
        command, cwd=ROOT, env=door_env(server), capture_output=True, text=True, timeout=300
    )


def outcomes(output: str) -> dict[str, str]:
    return {
        name: line.split()[0] for line in output.splitlines() for name in CHECKS if line[8:].startswith(name)
    }


def test_smoke_passes_every_check_with_timings_and_leaves_nothing_behind(
    server: LocalServer, upstream: FakeOpenAIServer
) -> None:
    upstream.script((200, chat_completion("Hello there, friend.")))

    done = smoke(server, "--key", API_KEY, "--chat-model", "stub-model")

    assert done.returncode == 0, done.stdout + done.stderr
    assert outcomes(done.stdout) == dict.fromkeys(CHECKS, "ok")
    assert re.search(r"ok +health +[\d,]+ ms", done.stdout)
    run = re.search(r"\(run (smoke-[0-9a-f]{8})\)", done.stdout)
    assert run, done.stdout
    # Nothing of the run is left: no session (a session goes with its last turn), no fact scope
    api = server.client()
    for session in (f"{run.group(1)}-s", f"{run.group(1)}-fork"):
        with pytest.raises(NotFound):
            api.show_session(session)
    threads = api.list_threads(limit=500)
    listed = [s.session_uuid for thread in threads.threads for s in thread.sessions]
    assert not [session for session in listed if session.startswith(run.group(1))]
    assert not [scope for scope in threads.scopes if scope.scope.get("smoke_run") == run.group(1)]


# Seconds before an index write shows (OpenSearch Serverless: 10-30 s). The smoke test passes only if
# a bank fact is found before its write shows (the store answers for young facts) and it waits for
# extracted memories to show; the longer the delay, the longer it waits, never the other outcome.
SETTLE_SECONDS = "6"


@pytest.fixture(scope="module")
def settling_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    server = LocalServer(
        tmp_path_factory.mktemp("settling"), env={"MEMORY_ENGINE_LOCAL_INDEX_SETTLE_SECONDS": SETTLE_SECONDS}
    )
    server.start()
    yield server
    server.stop()


def test_smoke_passes_against_an_index_that_shows_writes_late(settling_server: LocalServer) -> None:
    done = smoke(settling_server, "--key", API_KEY)

    assert done.returncode == 0, done.stdout + done.stderr
    assert outcomes(done.stdout) == {**dict.fromkeys(CHECKS, "ok"), "chat with memory": "skip"}
    assert "writes show 6.0 s late" in settling_server.stop()


def test_a_wrong_key_fails_the_first_check_that_needs_it_and_exits_non_zero(server: LocalServer) -> None:
    done = smoke(server, "--key", "not-the-key")

    assert done.returncode == 1
    found = outcomes(done.stdout)
    assert found["health"] == "ok"
    assert found["consolidate past the threshold"] == "FAIL" and "Unauthorized" in done.stdout
    assert found["wait for extraction"] == "skip"
    assert done.stdout.rstrip().splitlines()[-1].startswith("FAILED in ")
