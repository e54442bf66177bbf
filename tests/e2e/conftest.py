"""The local server as a subprocess, driven over HTTP like a user would."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memory_engine_client import MemoryEngine
from tests.e2e import waits
from tests.e2e.child_output import ChildOutput

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "e2e-secret-key"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalServer:
    data_dir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[str] | None = None
    env: dict[str, str] = field(default_factory=dict)  # extra settings, e.g. the chat upstream
    clients: dict[str, MemoryEngine] = field(default_factory=dict)
    output: ChildOutput | None = None  # what the server printed (`stop` returns it)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        env = {
            **os.environ,
            "PORT": str(self.port),
            "MEMORY_ENGINE_DATA_DIR": str(self.data_dir),
            "MEMORY_ENGINE_API_KEY": API_KEY,
            # This checkout's code, even when another checkout is installed in the venv.
            "PYTHONPATH": os.pathsep.join(
                [str(ROOT / "layers" / "core"), str(ROOT), str(ROOT / "clients" / "python")]
            ),
            **self.env,
        }
        self.output = ChildOutput()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memory_engine_app.server"],
            cwd=ROOT,
            env=env,
            stdout=self.output.file,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            # The server loads its model before it answers (app.load_models): healthy is ready.
            waits.wait_started(self._healthy, self.process, "the local server")
        except RuntimeError as failed:
            raise RuntimeError(f"{failed}:\n{self.stop()[-4000:]}") from None

    def _healthy(self) -> bool:
        try:
            return self.call("GET", "/v1/engine/health/", key=None)[0] == 200
        except OSError:
            return False

    def stop(self) -> str:
        for client in self.clients.values():
            client.close()
        self.clients.clear()
        if self.process is not None:
            self.process.send_signal(2)  # Ctrl-C
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        output = self.output.text() if self.output is not None else ""
        if self.output is not None:
            self.output.close()
            self.output = None
        return output

    def client(self, key: str = API_KEY) -> MemoryEngine:
        """The project's Python client pointed at this server (what the tests use unless they are
        about the wire itself), one per key, closed when the server stops."""
        if key not in self.clients:
            self.clients[key] = MemoryEngine(self.url, key, timeout=60)
        return self.clients[key]

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        key: str | None = API_KEY,
        raw: bytes | None = None,
        timeout: float = 60,
    ) -> tuple[int, dict[str, Any]]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if key is not None:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")


CHAT_MODEL = "stub-model"


def started_with_chat_stub(data_dir: Path, upstream_url: str) -> LocalServer:
    """A started local server whose chat upstream is a local OpenAI stub at `upstream_url`."""
    env = {
        "OPENAI_BASE_URL": upstream_url,
        "OPENAI_API_KEY": "upstream-key",
        "MEMORY_ENGINE_CHAT_MODEL": CHAT_MODEL,
    }
    server = LocalServer(data_dir, env=env)
    server.start()
    return server


def wait_for(condition: Callable[[], Any], seconds: float = 30) -> Any:
    """Poll until `condition()` is truthy, failing after `seconds`: for what no queued job brings
    about (a server's state, a page); the worker's results are waited for by `wait_on_work`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def wait_on_work(server: LocalServer, condition: Callable[[], Any], seconds: float = 30) -> Any:
    """Poll until `condition()` is truthy (the worker's background work), for as long as the
    server's queue shows a job of the test key's tenant waiting or running (`waits.wait_on_work`):
    `seconds` only counts while it shows none, and a job parked dead fails the wait with its error."""
    return waits.wait_on_work(condition, lambda: server.client().show_queue(), idle_seconds=seconds)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    server = LocalServer(tmp_path_factory.mktemp("data"))
    server.start()
    yield server
    server.stop()
