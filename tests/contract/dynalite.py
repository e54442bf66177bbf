"""dynalite, an implementation of DynamoDB on LevelDB (npm, MIT), as a backend of the contract
suites beside moto: two independent implementations of the same API. One in-memory server per
test session, a fresh table per test.

`make dynalite` installs it into .dynalite/ with npm; it runs on Node.js. The server starts as
soon as the collected tests are known to use it (`start_early`, from the conftest), so Node boots
while other tests run; the first test that needs it waits for it. Without Node its tests skip,
saying so; without the package they fail, saying how to install it. The server is stopped at the
end of the session (`stop`).
"""

from __future__ import annotations

import itertools
import json
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from memory_engine.adapters.aws.dynamodb_keys import create_table_request

FOLDER = Path(__file__).resolve().parents[2] / ".dynalite"
PACKAGE = FOLDER / "node_modules" / "dynalite"
REGION = "us-east-1"
NAME = "dynalite"  # the backends' name in the contract maps
START_SECONDS = 60  # Node starts in well under a second, but the machine may be loaded
# Tables become ACTIVE at once (its default imitates AWS's delays), data stays in memory.
_SCRIPT = """
const dynalite = require(%s)({createTableMs: 0, deleteTableMs: 0, updateTableMs: 0});
dynalite.listen(%d, "127.0.0.1", (error) => { if (error) { console.error(error); process.exit(1); } });
"""


class Dynalite:
    """One dynalite process on a free loopback port, in memory."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        script = _SCRIPT % (json.dumps(str(PACKAGE)), self.port)
        # Its output goes to a file, never a pipe nobody reads (a full pipe would stall it).
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - open for the process's lifetime
        self.process = subprocess.Popen(["node", "-e", script], stdout=self.log, stderr=subprocess.STDOUT)
        self._ready = False
        self._client: Any = None
        self._tables = itertools.count(1)

    def client(self) -> Any:
        """A DynamoDB client on this server (any credentials do)."""
        if not self._ready:
            self._wait()
        if self._client is None:
            import boto3

            self._client = boto3.client(
                "dynamodb",
                endpoint_url=self.endpoint,
                region_name=REGION,
                aws_access_key_id="local",
                aws_secret_access_key="local",
            )
            self._client.meta.events.register("after-call.dynamodb", _skip_on_gap)
        return self._client

    def engine_table(self) -> str:
        """A fresh table laid out as the engine's (`create_table_request`)."""
        name = f"memory-engine-{next(self._tables)}"
        dynamodb = self.client()
        dynamodb.create_table(**create_table_request(name))
        dynamodb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05})
        # No UpdateTimeToLive: dynalite lacks it (a gap). Nothing here waits for AWS to expire
        # an item (that takes up to days), so the table is the engine's without it.
        return name

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    def _wait(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.seek(0)
                said = self.log.read()[-2000:]
                raise RuntimeError(f"dynalite exited with {self.process.returncode}: {said}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                self._ready = True
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"dynalite did not listen on {self.endpoint} within {START_SECONDS} s")


def _skip_on_gap(parsed: dict[str, Any], model: Any, **_: Any) -> None:
    """Skip the test when it reaches an operation dynalite lacks, naming it.

    dynalite 4.0.0's gaps: TransactWriteItems (every write of the store that touches more than
    one item, so most store tests skip here) and UpdateTimeToLive. A skip is an exception pytest
    lets through the code under test, so no store error handling can turn it into a result.
    """
    if parsed.get("Error", {}).get("Code") == "UnknownOperationException":
        pytest.skip(f"dynalite has no {model.name} (its gap, not the store's: moto runs this test)")


_server: Dynalite | None = None


def missing() -> str | None:
    """Why the server cannot run here, or None."""
    if shutil.which("node") is None:
        return "Node.js is not installed: dynalite needs it"
    if not (PACKAGE / "package.json").exists():
        return f"dynalite is not installed in {FOLDER}: run `make dynalite`"
    return None


def start_early() -> None:
    """Start the server now if it can run (the conftest calls this when tests will use it)."""
    global _server
    if _server is None and missing() is None:
        _server = Dynalite()


def server() -> Dynalite:
    """The session's server: skips the test without Node, fails it without the package."""
    why = missing()
    if why is not None and shutil.which("node") is None:
        pytest.skip(why)
    if why is not None:
        pytest.fail(why)
    start_early()
    assert _server is not None
    return _server


def stop() -> None:
    global _server
    if _server is not None:
        _server.stop()
        _server = None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
