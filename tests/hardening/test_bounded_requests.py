"""What one request may cost the local server (issue #33 §1, §4): a cap on what an embed request
embeds, a deadline on every request, work that stops once its client has gone, a whole-request
bound on a slow sender, a bound on connection threads, and the server's own refusals in JSON."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from memory_engine.edge.auth import AnyKey, SingleKey
from memory_engine.embedding import BoundedEmbedder
from memory_engine.ports import EmbedMode
from memory_engine_app.server.dispatch import Dispatcher, load_routes
from tests.fakes.ports import HashEmbedder
from tests.fakes.stack import LOCAL_KEY, LocalStack, http_server, local_stack, serve_http

ROOT = Path(__file__).resolve().parents[2]


def raw_exchange(base: str, request: bytes, timeout: float = 10) -> bytes:
    """Send raw bytes, read until the server closes (or `timeout` passes quietly)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(request)
        sock.settimeout(timeout)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and _complete(answer):
                    break
        except TimeoutError:
            pass
    return answer


def _complete(answer: bytes) -> bool:
    head, _, body = answer.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def status_and_json(answer: bytes) -> tuple[int, dict[str, str], object]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, json.loads(body) if body else None


# -- what a request may ask for -------------------------------------------------------------------


def test_an_embed_request_over_its_total_is_a_422_naming_text_and_embeds_nothing(stack: LocalStack) -> None:
    # Given a request of 9 long texts (each counted up to the 2,048 characters it embeds)
    embedder = stack.engine.embedder
    assert isinstance(embedder, HashEmbedder)

    # When it is sent
    status, _, body = stack.call("POST", "/v1/engine/embed/", {"text": ["long text " * 1000] * 9})

    # Then it is refused naming the field and the limit, before the model was called
    assert status == 422
    assert [error["field"] for error in body["errors"]] == ["text"]
    assert "18432" in body["message"] and "16384" in body["message"]
    assert embedder.calls == 0


def test_the_largest_embed_request_within_its_total_is_embedded(stack: LocalStack) -> None:
    # 8 texts at the 2,048-character cap: the default total, 16,384 (bench.speed.embed_limits)
    status, _, body = stack.call("POST", "/v1/engine/embed/", {"text": ["long text " * 1000] * 8})

    assert status == 200 and len(body["embeddings"]) == 8


def test_a_request_past_its_deadline_is_a_504_in_its_envelope(stack: LocalStack) -> None:
    # Given a server whose requests have half a second (a second is kept to answer in)
    dispatcher = Dispatcher(load_routes(), AnyKey([SingleKey(LOCAL_KEY)]), deadline_s=0.5)
    body = json.dumps({"parent_session_uuids": ["t"], "user_input": {"query": "anything"}}).encode()

    # When a retrieve comes
    status, _, answer = dispatcher.dispatch(
        "POST", "/v1/engine/retrieve/", "", {"Authorization": f"Bearer {LOCAL_KEY}"}, body
    )

    # Then it stops at its first check with a 504 that says why
    assert status == 504
    payload = json.loads(answer)  # type: ignore[arg-type]
    assert payload["status"] == "error" and "deadline" in payload["message"]


# -- work nobody waits for stops ------------------------------------------------------------------


class SlowSpy(HashEmbedder):
    """Counts the passages it embeds; each passage call waits until `go` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.passages = 0
        self.started = threading.Event()
        self.go = threading.Event()

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if mode == "passage":
            self.passages += len(texts)
            self.started.set()
            self.go.wait(10)
        return super().embed(texts, mode)


def test_a_retrieve_whose_client_has_gone_stops_embedding(tmp_path: Path) -> None:
    # Given 64 buffered turns of 2,000 characters nobody embedded yet, all within the budget
    settings = {
        "extraction_threshold": 1000,
        "retrieve_embed_budget": 64,
        "retrieve_embed_budget_chars": 10**6,
    }
    with local_stack(tmp_path, **settings) as stack:
        for n in range(64):
            turn = {"uuid": f"d{n}", "query": f"turn {n} " + "about the harbour " * 110}
            body = {"session_uuid": "s", "parent_session_uuid": "t", "new_dialog": turn}
            assert stack.call("POST", "/v1/engine/consolidate/", body)[0] == 200
        spy = SlowSpy()
        stack.engine.embedder = BoundedEmbedder(spy, max_chars=2048)
        with http_server(stack) as server:
            # When a client asks for a retrieve and leaves while its first chunk is embedded
            body = json.dumps({"parent_session_uuids": ["t"], "user_input": {"query": "harbour"}}).encode()
            client = socket.create_connection(("127.0.0.1", server.server_address[1]))
            client.sendall(
                b"POST /v1/engine/retrieve/ HTTP/1.1\r\nHost: x\r\n"
                + f"Authorization: Bearer {LOCAL_KEY}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            assert spy.started.wait(10)
            client.close()
            time.sleep(0.2)  # the close reaches the server's socket
            spy.go.set()
            assert server.wait_idle(10)

    # Then the rest of the turns were never embedded
    assert 0 < spy.passages <= 16


# -- the connection itself ------------------------------------------------------------------------


def test_a_request_trickling_in_is_cut_off_at_its_whole_request_deadline(stack: LocalStack) -> None:
    # Given a server that gives a request 1 s from its first byte (5 s per receive)
    with serve_http(stack, read_timeout_s=5, request_read_s=1) as base:
        host, port = base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"GET /v1/engine/health/ HTTP/1.1\r\nX-Slow: ")
            sock.setblocking(False)
            # When the client sends one more byte every 0.25 s, 40 in all (10 s)
            closed_after = None
            for sent in range(40):
                time.sleep(0.25)
                try:
                    if sock.recv(1024) == b"":
                        closed_after = sent
                        break
                except BlockingIOError:
                    pass
                except ConnectionError:
                    closed_after = sent
                    break
                try:
                    sock.send(b"a")
                except OSError:
                    closed_after = sent
                    break

    # Then the server closed the connection long before the client was done
    assert closed_after is not None and closed_after < 20


def test_two_content_length_headers_are_a_400(stack: LocalStack) -> None:
    with serve_http(stack) as base:
        answer = raw_exchange(
            base,
            b"POST /v1/engine/embed/ HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 17\r\n"
            + f"Authorization: Bearer {LOCAL_KEY}\r\n\r\n".encode()
            + b'{"text": "hello"}',
        )

    status, _, body = status_and_json(answer)
    assert status == 400
    assert body == {
        "status": "error",
        "message": "Send one Content-Length header, not several.",
        "errors": [],
    }


def test_a_malformed_request_line_is_a_json_400(stack: LocalStack) -> None:
    with serve_http(stack) as base:
        answer = raw_exchange(base, b"NOT A REQUEST LINE AT ALL\r\n\r\n")

    status, headers, body = status_and_json(answer)
    assert status == 400 and headers["content-type"] == "application/json"
    assert isinstance(body, dict) and body["status"] == "error" and body["message"]


def test_a_request_line_too_long_is_a_json_414(stack: LocalStack) -> None:
    with serve_http(stack) as base:
        answer = raw_exchange(base, b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n")

    status, _, body = status_and_json(answer)
    assert status == 414 and isinstance(body, dict) and body["status"] == "error"


def test_too_many_headers_on_a_game_route_are_a_431_in_the_game_envelope(stack: LocalStack) -> None:
    headers = b"".join(b"X-Extra-%d: 1\r\n" % n for n in range(101))
    with serve_http(stack) as base:
        answer = raw_exchange(base, b"POST /open/game/memory HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")

    status, _, body = status_and_json(answer)
    assert status == 431
    assert isinstance(body, dict) and body["code"] == 431 and body["msg"]


def test_options_on_the_chat_route_is_a_501_in_openais_envelope(stack: LocalStack) -> None:
    with serve_http(stack) as base:
        answer = raw_exchange(base, b"OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n")

    status, headers, body = status_and_json(answer)
    assert status == 501 and headers["allow"] == "GET, POST, DELETE"
    assert isinstance(body, dict) and set(body["error"]) == {"message", "type", "param", "code"}


def test_head_is_a_501_with_json_headers_and_no_body(stack: LocalStack) -> None:
    with serve_http(stack) as base:
        answer = raw_exchange(base, b"HEAD /v1/engine/health/ HTTP/1.1\r\nHost: x\r\n\r\n", timeout=2)

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501") and b"Content-Type: application/json" in head
    assert body == b""


def test_a_busy_port_is_one_clear_line_and_exit_status_1(tmp_path: Path) -> None:
    # Given a port someone else listens on
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {
            **os.environ,
            "PORT": str(port),
            "MEMORY_ENGINE_DATA_DIR": str(tmp_path),
            "MEMORY_ENGINE_API_KEY": "busy-port-key",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)]),
        }

        # When the server is started on it
        done = subprocess.run(
            [sys.executable, "-m", "memory_engine_app.server"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    # Then it says so in one line and exits with status 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1
    assert lines == [
        f"memory-engine: port {port} on 127.0.0.1 is already in use: "
        "stop what holds it, or set PORT to another."
    ]
