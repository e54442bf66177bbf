"""No handful of idle or slow connections can deny the local server to others: a connection
holds its slot for good only while one of its requests runs; waiting for a request (idle, or
trickling one in) it gives the slot to a newcomer when all are taken. The attackers here are
another process, as they would be (issue #42 §2)."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from memory_engine.embedding import BoundedEmbedder
from memory_engine.ports import EmbedMode
from memory_engine.settings import ServerSettings
from tests.fakes.ports import HashEmbedder
from tests.fakes.stack import LOCAL_KEY, LocalStack, http_server
from tests.hardening.test_bounded_requests import status_and_json

WAIT_S = 30  # a bound on waiting for an answer: only reached when the test fails

ATTACKER = Path(__file__).with_name("attacker.py")


@contextmanager
def attacker(port: int, count: int, mode: str) -> Iterator[None]:
    process = subprocess.Popen(
        [sys.executable, str(ATTACKER), str(port), str(count), mode], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield
    finally:
        process.kill()
        process.wait(WAIT_S)


def ask(port: int, method: str, path: str, body: dict[str, object] | None = None) -> int:
    """One request on a fresh connection; its status."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    try:
        headers = {"Authorization": f"Bearer {LOCAL_KEY}", "Content-Type": "application/json"}
        connection.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def retrieve(port: int) -> int:
    return ask(
        port, "POST", "/v1/engine/retrieve/", {"parent_session_uuids": ["t"], "user_input": {"query": "hi"}}
    )


def test_a_new_connection_past_the_bound_takes_the_slot_of_the_one_waiting_longest(stack: LocalStack) -> None:
    with http_server(stack, max_connections=2) as server:
        port = server.server_address[1]
        # Given both slots held by clients that connected and sent nothing
        oldest = socket.create_connection(("127.0.0.1", port))
        newer = socket.create_connection(("127.0.0.1", port))
        try:
            # When a third client asks for health
            status = ask(port, "GET", "/v1/engine/health/")

            # Then it is answered, and the connection that waited longest was closed for it
            oldest.settimeout(WAIT_S)
            assert (status, oldest.recv(1)) == (200, b"")
            assert server.evictions == 1
        finally:
            oldest.close()
            newer.close()


class Blocking(HashEmbedder):
    """Each passage call waits until `go` is set, signalling `started`."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.go = threading.Event()

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        self.started.set()
        assert self.go.wait(WAIT_S)
        return super().embed(texts, mode)


def test_a_newcomer_is_answered_503_only_when_every_slot_runs_a_request(stack: LocalStack) -> None:
    blocking = Blocking()
    stack.engine.embedder = BoundedEmbedder(blocking, max_chars=2048)
    with http_server(stack, max_connections=1) as server, ThreadPoolExecutor(1) as pool:
        port = server.server_address[1]
        # Given the one slot running an embed request
        running = pool.submit(ask, port, "POST", "/v1/engine/embed/", {"text": ["hello"]})
        assert blocking.started.wait(WAIT_S)
        try:
            # When another client connects
            with socket.create_connection(("127.0.0.1", port)) as late:
                late.settimeout(WAIT_S)
                answer = b""
                while chunk := late.recv(4096):
                    answer += chunk
        finally:
            blocking.go.set()

        # Then it is told at once, in JSON, to come back, and the running request is answered
        status, headers, body = status_and_json(answer)
        assert status == 503 and headers["retry-after"] == "1"
        assert body == {"status": "error", "message": "Too many connections: retry shortly.", "errors": []}
        assert running.result(WAIT_S) == 200


def test_sixty_four_idle_sockets_of_another_process_lock_nobody_out(stack: LocalStack) -> None:
    with http_server(stack, max_connections=64) as server:
        port = server.server_address[1]
        # Given another process holding 64 connections that send nothing, reopened when closed
        with attacker(port, 64, "idle"):
            # When clients ask for health and retrieve, each on a new connection
            statuses = [ask(port, "GET", "/v1/engine/health/") for _ in range(5)]
            statuses += [retrieve(port) for _ in range(5)]

    # Then every one is answered
    assert statuses == [200] * 10


def test_sixty_four_trickling_sockets_of_another_process_lock_nobody_out(stack: LocalStack) -> None:
    with http_server(stack, max_connections=64) as server:
        port = server.server_address[1]
        # Given another process trickling 64 requests in, a header byte every half second
        with attacker(port, 64, "trickle"):
            # When clients ask for health and retrieve, each on a new connection
            statuses = [ask(port, "GET", "/v1/engine/health/") for _ in range(5)]
            statuses += [retrieve(port) for _ in range(5)]

    # Then every one is answered
    assert statuses == [200] * 10


def test_a_keep_alive_pool_of_a_hundred_connections_is_served_whole(stack: LocalStack) -> None:
    with http_server(stack, max_connections=ServerSettings().server_max_connections) as server:
        port = server.server_address[1]
        # Given a client with 100 keep-alive connections, all open at once
        opened = threading.Barrier(100)

        def three_requests() -> list[int]:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
            connection.connect()
            opened.wait(WAIT_S)
            statuses = []
            for _ in range(3):
                connection.request("GET", "/v1/engine/health/")
                response = connection.getresponse()
                response.read()
                statuses.append(response.status)
            connection.close()
            return statuses

        # When each sends three requests on its connection
        with ThreadPoolExecutor(100) as pool:
            answered = [
                status for statuses in pool.map(lambda _: three_requests(), range(100)) for status in statuses
            ]

    # Then all 300 are answered, none refused
    assert answered == [200] * 300
