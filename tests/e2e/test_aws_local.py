"""`make run-aws-local`: the API on the AWS backend over real HTTP, moto in server mode standing in
for DynamoDB and SQS, its index showing writes 6 s late as OpenSearch does. A turn goes through
DynamoDB and the SQS queue to the worker and comes back from retrieve as a memory, and the records
are in moto's table."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_engine.models.api import RetrievedMemory
from tests.e2e.child_output import ChildOutput
from tests.e2e.conftest import ROOT, LocalServer, free_port, wait_for


class AwsLocalServer(LocalServer):
    """The local server started by memory_engine_app.aws_local, with the key it prints."""

    moto_port: int = 0
    key: str = ""

    def start(self) -> None:
        self.moto_port = free_port()
        env = {
            **os.environ,
            "PORT": str(self.port),
            "MOTO_PORT": str(self.moto_port),
            "MEMORY_ENGINE_DATA_DIR": str(self.data_dir),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)]),
            # Its index shows writes late, as OpenSearch's does: what a stack on AWS meets.
            "MEMORY_ENGINE_LOCAL_INDEX_SETTLE_SECONDS": "6",
        }
        env.pop("MEMORY_ENGINE_API_KEY", None)
        self.output = ChildOutput()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memory_engine_app.aws_local"],
            cwd=ROOT,
            env=env,
            stdout=self.output.file,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 120
        while not self.key and time.monotonic() < deadline and self.process.poll() is None:
            printed = [line for line in self.output.text().splitlines() if line.startswith("API key")]
            if printed:
                self.key = printed[0].split()[-1]
            else:
                time.sleep(0.2)
        if not self.key:
            raise RuntimeError(f"aws_local printed no API key: {self.stop()}")
        wait_for(lambda: self._healthy(), 60)

    def _healthy(self) -> bool:
        try:
            return self.call("GET", "/v1/engine/health/", key=None)[0] == 200
        except OSError:
            return False

    def table_items(self) -> list[dict[str, Any]]:
        import boto3

        dynamodb = boto3.client(
            "dynamodb",
            endpoint_url=f"http://127.0.0.1:{self.moto_port}",
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        items: list[dict[str, Any]] = dynamodb.scan(TableName="memory-engine")["Items"]
        return items


@pytest.fixture(scope="module")
def aws_local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AwsLocalServer]:
    server = AwsLocalServer(Path(tmp_path_factory.mktemp("data")))
    server.start()
    yield server
    server.stop()


def test_a_turn_goes_through_dynamodb_and_sqs_and_comes_back_as_a_memory(aws_local: AwsLocalServer) -> None:
    # Given the API on the AWS backend (moto), with the key it issued in DynamoDB
    api = aws_local.client(aws_local.key)
    turn = {"uuid": "d1", "query": "My cat Mochi was born in Lisbon.", "answer": "Lovely!"}
    # When a turn is consolidated (its extraction queued on SQS, run by the worker)
    answer = api.consolidate("s1", "thread-1", turn, user_name="Alex", language="en", force_summary=True)
    assert (answer.status, answer.message) == ("success", None)

    def memory_hits() -> list[RetrievedMemory]:
        return [
            hit for hit in api.retrieve("thread-1", "Where was my cat born?").data if hit.kind == "memory"
        ]

    # Then retrieve finds the memory, and the session, turn and memory items are in the table
    (hit,) = wait_for(memory_hits, 90)
    assert "Lisbon" in hit.content and hit.source_dialog_uuids == ["d1"]
    sort_keys = [item["sk"]["S"] for item in aws_local.table_items()]
    assert any(key.startswith("TURN#") for key in sort_keys), sort_keys


def test_the_local_key_is_not_accepted_there_only_the_issued_one(aws_local: AwsLocalServer) -> None:
    assert aws_local.call("GET", "/v1/engine/health/", key=None)[0] == 200
    assert aws_local.call("POST", "/v1/engine/embed/", {"text": "hi"}, key="e2e-secret-key")[0] == 401


def test_smoke_passes_against_the_aws_backend_and_skips_chat_without_a_model(
    aws_local: AwsLocalServer,
) -> None:
    # When `memory-engine smoke` walks the API on the AWS backend (no chat upstream configured)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memory_engine_app.cli",
            "smoke",
            "--api",
            aws_local.url,
            "--key",
            aws_local.key,
            "--timeout",  # per request: a busy host's local stack answers later than the 30 s default
            "90",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=300,
    )

    # Then every check passed through DynamoDB and SQS, chat skipped with a note saying how to run it
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout and "ok    clean up" in done.stdout
    assert "skip  chat with memory" in done.stdout and "--chat-model" in done.stdout
