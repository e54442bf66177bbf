"""`ChatUpstream` over plain HTTP (the standard library): any OpenAI-compatible endpoint.

Raw JSON in, raw JSON out: the answer is passed on as the endpoint wrote it, fields it has that
the official client does not know included. No `openai` import, so the chat route's cold start
pays for nothing it does not use.

A stream counts as complete only when the endpoint says so (`[DONE]`, or a choice's
`finish_reason` before the connection closes): one that is cut off raises `UpstreamFailed` while
being read, so the caller never takes a partial answer for a whole one. An endpoint that answers a
stream request with one JSON completion has its answer cut into chunks.

The endpoint's URL goes to the log, never into an error a client reads; nor does the endpoint's
own text on a failure or a refusal (a 4xx or 5xx body, an error chunk), which can hold an internal
URL or the key it was sent: the client gets a fixed message with the status (a 4xx in the engine's
words, `refusals`), the log the text with keys and URLs redacted (`logsafe.redact_foreign`).
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.client import HTTPResponse
from typing import Any

from memory_engine.adapters.openai.refusals import rejected
from memory_engine.edge.logsafe import redact_foreign
from memory_engine.errors import UpstreamFailed

log = logging.getLogger("memory_engine.chat")

_MAX_ERROR_BYTES = 65_536
_SSE_DATA = "data:"
_DONE = "[DONE]"
_FAILED_MID_STREAM = "The chat model failed mid-stream; the answer is cut off: send the request again."
_CUT = (
    "The chat model's stream ended before the answer was complete (the connection closed without "
    "[DONE]); the answer is cut off: send the request again."
)


class _Deadline:
    """How long the next wait on the model may last: `each` at most, and never past the end of
    the whole answer's budget (`total`, when set)."""

    def __init__(self, each: float, total: float | None) -> None:
        self._each = each
        self._total = total
        self._ends = None if total is None else time.monotonic() + total

    def wait(self) -> float:
        if self._ends is None:
            return self._each
        self.check()
        return min(self._each, self._ends - time.monotonic())

    def check(self) -> None:
        """Raise UpstreamFailed, saying so, once the whole answer's time is spent (a read cut
        short by it reports this rather than a timeout)."""
        if self._ends is not None and time.monotonic() >= self._ends:
            raise UpstreamFailed(
                f"The chat model did not finish its answer within {self._total:g} s; retry later (the "
                "operator may raise MEMORY_ENGINE_CHAT_DEADLINE_SECONDS within the function's timeout)."
            )

    def limit(self, response: HTTPResponse) -> None:
        """Bound the response's next socket read by `wait()`."""
        # http.client keeps the socket behind its file object; urllib offers no public way to
        # change a live response's timeout, and each read must end by the deadline.
        sock = getattr(getattr(response.fp, "raw", None), "_sock", None)
        if sock is not None:
            sock.settimeout(self.wait())


class HttpChatUpstream:
    """POST {base_url}/chat/completions with `Authorization: Bearer <api_key>` (a callable key is
    asked on each request); `timeout_s` bounds each wait (connect, first byte, every chunk of a
    stream), `deadline_s` the whole answer, however it trickles in (None: no bound beyond each
    wait). Behind API Gateway the deadline keeps a slow model's failure an OpenAI-shaped 502 from
    this function rather than the gateway's own timeout."""

    def __init__(
        self,
        base_url: str,
        api_key: str | Callable[[], str] | None = None,
        timeout_s: float = 30.0,
        deadline_s: float | None = None,
    ) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._deadline_s = deadline_s

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        deadline = _Deadline(self._timeout_s, self._deadline_s)
        with self._open(body, deadline) as response:
            raw = self._read(response, deadline)
        return self._completion(raw)

    def stream(self, body: dict[str, Any]) -> Iterator[str]:
        deadline = _Deadline(self._timeout_s, self._deadline_s)
        response = self._open(body, deadline)
        if response.headers.get_content_type() == "application/json":
            # A server that does not stream: its whole answer, as the chunks it would have sent.
            with response:
                answer = self._completion(self._read(response, deadline))
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return iter(completion_chunks(answer, include_usage))
        return self._events(response, deadline)

    def _events(self, response: HTTPResponse, deadline: _Deadline) -> Iterator[str]:
        finished = False
        try:
            while True:
                deadline.limit(response)
                raw = response.readline()
                if not raw:
                    break
                if not raw.endswith(b"\n"):  # the connection closed in the middle of a line
                    break
                line = raw.decode("utf-8").strip()
                if not line.startswith(_SSE_DATA):
                    continue  # blank separators, comments (": keep-alive"), event names
                payload = line[len(_SSE_DATA) :].strip()
                if payload == _DONE:
                    return
                chunk = _json_object(payload)
                if chunk is None:
                    self._fail("stream chunk that is not a JSON object", payload[:200])
                    raise UpstreamFailed("The chat model sent a stream chunk that is not JSON; retry later.")
                if "error" in chunk:
                    self._fail("error mid-stream", _error_message(chunk))
                    raise UpstreamFailed(_FAILED_MID_STREAM)
                finished = finished or _has_finish_reason(chunk)
                yield payload
        except (OSError, http.client.HTTPException, UnicodeDecodeError) as error:  # timeouts included
            self._fail("stream broken", str(error))
            deadline.check()
            raise UpstreamFailed(
                "The chat model stopped mid-stream (timed out or dropped the connection); the answer "
                "is cut off: send the request again."
            ) from error
        finally:
            response.close()
        if not finished:
            self._fail("stream cut off", "no [DONE] and no finish_reason")
            raise UpstreamFailed(_CUT)

    def _read(self, response: HTTPResponse, deadline: _Deadline) -> bytes:
        parts: list[bytes] = []
        try:
            while True:
                deadline.limit(response)
                part = response.read1(65536)
                if not part:
                    return b"".join(parts)
                parts.append(part)
        except (OSError, http.client.HTTPException) as error:
            self._fail("answer broken", str(error))
            deadline.check()
            raise UpstreamFailed(
                "The chat model stopped in the middle of its answer (timed out or dropped the "
                "connection); send the request again."
            ) from error

    def _completion(self, raw: bytes) -> dict[str, Any]:
        try:
            answer = json.loads(raw)
        except ValueError as error:
            self._fail("answer not JSON", raw[:200].decode("utf-8", "replace"))
            raise UpstreamFailed(
                "The chat model answered with something that is not JSON; the operator should check "
                "that OPENAI_BASE_URL points at an OpenAI-compatible /v1 endpoint."
            ) from error
        if not isinstance(answer, dict):
            raise UpstreamFailed("The chat model answered with JSON that is not an object.")
        return answer

    def _open(self, body: dict[str, Any], deadline: _Deadline) -> HTTPResponse:
        request = urllib.request.Request(
            self._url,
            data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        key = self._api_key() if callable(self._api_key) else self._api_key
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            response: HTTPResponse = urllib.request.urlopen(request, timeout=deadline.wait())
        except urllib.error.HTTPError as error:
            raise self._refused(error) from error
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            self._fail("unreachable", str(getattr(error, "reason", error)))
            deadline.check()
            raise UpstreamFailed(
                "The chat model is unreachable or did not answer in time; retry later (the operator "
                "should check OPENAI_BASE_URL, MEMORY_ENGINE_CHAT_TIMEOUT_SECONDS and that the model "
                "server is up)."
            ) from error
        return response

    def _refused(self, error: urllib.error.HTTPError) -> Exception:
        raw = error.read(_MAX_ERROR_BYTES)  # what is logged of it is cut far shorter
        error.close()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = {"error": {"message": raw.decode("utf-8", "replace")[:2000], "type": "upstream_error"}}
        detail = _error_message(body) if isinstance(body, dict) else None
        self._fail(f"answered {error.code}", detail or str(error.reason))
        if 400 <= error.code < 500:
            return rejected(error.code, body, error.headers.get("Retry-After"))
        return UpstreamFailed(f"The chat model failed ({error.code}); retry later.")

    def _fail(self, what: str, detail: str) -> None:
        # The operator's record: which endpoint, and what it did (the client's error names neither).
        # The detail is the endpoint's own text: its keys and URLs are not ours to log.
        log.warning(
            "chat upstream %s", what, extra={"upstream": self._url, "detail": redact_foreign(detail)[:500]}
        )


def completion_chunks(answer: dict[str, Any], include_usage: bool = False) -> list[str]:
    """A chat completion as the `chat.completion.chunk` payloads a streaming server would send:
    per choice one delta with the whole message, then its finish reason; the usage chunk last
    when the request asked for it."""
    choices = answer.get("choices")
    if "error" in answer or not isinstance(choices, list):
        log.warning(
            "chat upstream answered a stream request with no completion",
            extra={"detail": redact_foreign(_error_message(answer))},
        )
        raise UpstreamFailed("The chat model answered a stream request with no completion; retry later.")
    base = {
        "id": answer.get("id", "chatcmpl-upstream"),
        "object": "chat.completion.chunk",
        "created": answer.get("created", 0),
        "model": answer.get("model", ""),
    }
    chunks: list[dict[str, Any]] = []
    for position, choice in enumerate(choices):
        index = choice.get("index", position) if isinstance(choice, dict) else position
        message = choice.get("message") if isinstance(choice, dict) else None
        message = message if isinstance(message, dict) else {}
        delta: dict[str, Any] = {"role": message.get("role", "assistant")}
        for key in ("content", "refusal"):
            if message.get(key) is not None:
                delta[key] = message[key]
        if isinstance(message.get("tool_calls"), list):
            delta["tool_calls"] = [{"index": n, **call} for n, call in enumerate(message["tool_calls"])]
        finish = (choice.get("finish_reason") if isinstance(choice, dict) else None) or "stop"
        chunks.append({**base, "choices": [{"index": index, "delta": delta, "finish_reason": None}]})
        chunks.append({**base, "choices": [{"index": index, "delta": {}, "finish_reason": finish}]})
    if include_usage and answer.get("usage") is not None:
        chunks.append({**base, "choices": [], "usage": answer["usage"]})
    return [json.dumps(chunk, ensure_ascii=False) for chunk in chunks]


def _json_object(payload: str) -> dict[str, Any] | None:
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _has_finish_reason(chunk: dict[str, Any]) -> bool:
    choices = chunk.get("choices")
    return isinstance(choices, list) and any(
        isinstance(choice, dict) and choice.get("finish_reason") for choice in choices
    )


def _error_message(body: dict[str, Any]) -> str:
    part = body.get("error")
    message = part.get("message") if isinstance(part, dict) else part
    return str(message)[:500] if message else "no message"
