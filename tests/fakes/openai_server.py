"""A small OpenAI-compatible HTTP server for tests: scripted answers in order, every request recorded.

    with FakeOpenAIServer([(200, chat_completion('{"a": 1}')), (429, error_body("slow down"))]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
        ...
        assert server.requests[0]["model"] == "test-model"

POST /v1/chat/completions answers with the next scripted response, except a request whose
structured-output mode (`response_format_mode`) the fake was told to refuse (`refuse_mode`): that
one gets the refusal a real server answers, without using up the script. A request with `stream: true`
gets a scripted chat completion back as server-sent events in OpenAI's chunk format (or, when
the scripted body is a list, those chunks as they are). With the script exhausted it answers 500
with a message saying so, so a test that makes an unexpected call fails loudly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Scripted:
    """One answer: HTTP status, JSON body (dict, list of SSE chunks, or raw text), extra headers,
    and a delay before answering (to provoke client timeouts)."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    # A stream request: close the connection after this many chunks, with no [DONE] (a cut-off
    # stream); or answer with the JSON body as it is, as a server that does not stream would.
    cut_after: int | None = None
    no_stream: bool = False
    chunk_delay_s: float = 0.0  # a stream's pause before each chunk (a model that trickles)
    # A stream request: after this many chunks, send only keep-alive comments (as a CPU model's
    # server does while it reads a long prompt) until the client goes (`abandoned` counts it).
    hold_after: int | None = None


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


def chat_completion(
    content: str | None,
    *,
    finish_reason: str = "stop",
    model: str = "fake-model",
    prompt_tokens: int = 100,
    completion_tokens: int = 50,
) -> dict[str, Any]:
    """A `chat.completion` object with one choice."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_body(message: str, type_: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    """An OpenAI error body, as the client expects it for 4xx/5xx answers."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def stream_chunks(completion: dict[str, Any], *, include_usage: bool = False) -> list[dict[str, Any]]:
    """A chat completion cut into `chat.completion.chunk` objects: role, content word by word,
    finish reason, and the usage chunk when the request asked for it."""
    base = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
    }
    choice = completion["choices"][0]
    content = choice["message"].get("content") or ""
    pieces = content.split(" ")
    words = [piece + (" " if index < len(pieces) - 1 else "") for index, piece in enumerate(pieces)]
    chunks = [
        {
            **base,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
        }
    ]
    chunks += [
        {**base, "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
        for word in words
        if word
    ]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
    if include_usage:
        chunks.append({**base, "choices": [], "usage": completion.get("usage")})
    return chunks


def response_format_mode(body: Any) -> str:
    """A chat request's structured-output mode: json_schema, json_object_schema (JSON mode carrying
    a schema, as llama-cpp-python takes it), json_object, or text."""
    response_format = body.get("response_format") if isinstance(body, dict) else None
    if not isinstance(response_format, dict):
        return "text"
    kind = str(response_format.get("type", "text"))
    return "json_object_schema" if kind == "json_object" and "schema" in response_format else kind


# The longest a held stream waits for its client to go (a test that never closes it fails).
HOLD_LIMIT_S = 30.0


class FakeOpenAIServer:
    """Binds 127.0.0.1 on a free port; `base_url` ends in /v1 like OpenAI's."""

    def __init__(self, responses: Iterable[Scripted | tuple[Any, ...]] = ()) -> None:
        self._lock = threading.Lock()
        # Set each time a held stream's client closes the connection (the generation it would stop).
        self.abandoned = threading.Semaphore(0)
        self._script: list[Scripted] = []
        self._refusals: dict[str, Scripted] = {}
        self.recorded: list[Recorded] = []
        self.script(*responses)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[Any]:
        """JSON bodies of the chat-completion requests, in arrival order."""
        with self._lock:
            return [item.body for item in self.recorded if item.path == CHAT_PATH]

    def script(self, *responses: Scripted | tuple[Any, ...]) -> None:
        """Queue answers: `Scripted`, `(status, body)` or `(status, body, headers)`."""
        with self._lock:
            self._script += [item if isinstance(item, Scripted) else Scripted(*item) for item in responses]

    def refuse_mode(self, mode: str, status: int, body: Any) -> None:
        """Answer every request in structured-output `mode` with `status` and `body`, as a server
        without that mode does (see `response_format_mode`)."""
        with self._lock:
            self._refusals[mode] = Scripted(status, body)

    def clear_script(self) -> None:
        """Drop the answers not yet given."""
        with self._lock:
            self._script.clear()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, path: str, headers: dict[str, str], body: Any) -> Scripted:
        with self._lock:
            self.recorded.append(Recorded(path, headers, body))
            if path != CHAT_PATH:
                return Scripted(404, error_body(f"the fake serves only POST {CHAT_PATH}, not {path}"))
            refusal = self._refusals.get(response_format_mode(body))
            if refusal is not None:
                return refusal
            if not self._script:
                return Scripted(
                    500, error_body("the fake OpenAI server has no scripted response left", "server_error")
                )
            return self._script.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.0: one request per connection, so a streamed answer simply ends when closed.
            protocol_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body: Any = json.loads(raw.decode("utf-8"))
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                scripted = fake._next(self.path, dict(self.headers.items()), body)
                if scripted.delay_s:
                    time.sleep(scripted.delay_s)
                try:
                    streamed = isinstance(body, dict) and body.get("stream") and not scripted.no_stream
                    if streamed and scripted.status == 200:
                        self._stream(scripted, body)
                    else:
                        self._send(scripted)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

            def _send(self, scripted: Scripted) -> None:
                if isinstance(scripted.body, str):
                    payload, kind = scripted.body.encode("utf-8"), "text/plain; charset=utf-8"
                else:
                    payload = json.dumps(scripted.body, ensure_ascii=False).encode("utf-8")
                    kind = "application/json"
                self.send_response(scripted.status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in scripted.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, scripted: Scripted, request: dict[str, Any]) -> None:
                include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
                chunks = (
                    scripted.body
                    if isinstance(scripted.body, list)
                    else stream_chunks(scripted.body, include_usage=include_usage)
                )
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                for name, value in scripted.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                for chunk in chunks[: scripted.cut_after][: scripted.hold_after]:
                    time.sleep(scripted.chunk_delay_s)
                    self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
                    self.wfile.flush()
                if scripted.hold_after is not None:
                    self._hold()
                    return
                if scripted.cut_after is not None:
                    return  # HTTP/1.0: the connection closes here, mid-answer
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _hold(self) -> None:
                """Keep-alive comments until the client closes the connection."""
                ends = time.monotonic() + HOLD_LIMIT_S
                while time.monotonic() < ends:
                    try:
                        self.wfile.write(b": ping\n\n")
                        self.wfile.flush()
                    except OSError:
                        fake.abandoned.release()
                        return
                    time.sleep(0.01)

            def do_GET(self) -> None:
                self._send(fake._next(self.path, dict(self.headers.items()), None))

        return Handler
