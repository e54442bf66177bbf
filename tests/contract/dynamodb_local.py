"""DynamoDB Local, the DynamoDB implementation AWS ships, as a backend of the contract suites
beside moto: one in-memory server per test session, a fresh table per test.

`make dynamodb-local` puts DynamoDBLocal.jar in .dynamodb-local/ (from the npm package
amplify-dynamodb-simulator). The server starts as soon as the collected tests are known to use it
(`start_early`, from the conftest), so the JVM boots while other tests run; the first test that
needs it waits for it. Without Java its tests skip, saying so; without the jar they fail, saying
how to install it. The server is stopped at the end of the session (`stop`).
"""

from __future__ import annotations

import itertools
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from memory_engine.adapters.aws.dynamodb_keys import TTL_ATTRIBUTE, create_table_request

FOLDER = Path(__file__).resolve().parents[2] / ".dynamodb-local"
JAR = FOLDER / "DynamoDBLocal.jar"
REGION = "us-east-1"
NAME = "dynamodb-local"  # the backends' name in the contract maps
START_SECONDS = 180  # a JVM on a loaded 2-core machine takes tens of seconds
# A small heap, a quick JIT and one GC thread: a test server, not a database under load.
JVM_OPTIONS = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


class DynamoDbLocal:
    """One DynamoDB Local process on a free loopback port, in memory."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        command = [
            "java",
            *JVM_OPTIONS,
            f"-Djava.library.path={FOLDER / 'DynamoDBLocal_lib'}",
            "-jar",
            str(JAR),
            "-inMemory",
            "-port",
            str(self.port),
            "-disableTelemetry",
        ]
        # Its output goes to a file, never a pipe nobody reads (a full pipe would stall the JVM).
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - open for the process's lifetime
        self.process = subprocess.Popen(command, cwd=FOLDER, stdout=self.log, stderr=subprocess.STDOUT)
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
        return self._client

    def engine_table(self) -> str:
        """A fresh table laid out as the engine's (`create_table_request`), TTL on."""
        name = f"memory-engine-{next(self._tables)}"
        dynamodb = self.client()
        dynamodb.create_table(**create_table_request(name))
        dynamodb.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE}
        )
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
                raise RuntimeError(f"DynamoDB Local exited with {self.process.returncode}: {said}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                self._ready = True
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"DynamoDB Local did not listen on {self.endpoint} within {START_SECONDS} s")


_server: DynamoDbLocal | None = None


def missing() -> str | None:
    """Why the server cannot run here, or None."""
    if shutil.which("java") is None:
        return "Java is not installed: DynamoDB Local needs it (`make dynamodb-local` installs it as root)"
    if not JAR.exists():
        return f"DynamoDB Local is not installed in {FOLDER}: run `make dynamodb-local`"
    return None


def start_early() -> None:
    """Start the server now if it can run (the conftest calls this when tests will use it)."""
    global _server
    if _server is None and missing() is None:
        _server = DynamoDbLocal()


def server() -> DynamoDbLocal:
    """The session's server: skips the test without Java, fails it without the jar."""
    why = missing()
    if why is not None and shutil.which("java") is None:
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
