"""`ChatUpstream` over plain HTTP (the standard library): any OpenAI-compatible endpoint.

Raw JSON in, raw JSON out: the answer is passed on as the endpoint wrote it, fields it has that
the official client does not know included. No `openai` import, so the chat route's cold start
pays for nothing it does not use.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.client import HTTPResponse
from typing import Any

from memory_engine.errors import UpstreamFailed, UpstreamRejected

_SSE_DATA = "data:"
_DONE = "[DONE]"


class HttpChatUpstream:
    """POST {base_url}/chat/completions with `Authorization: Bearer <api_key>`."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 120.0) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = api_key
        self._timeout_s = timeout_s

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._open(body) as response:
            raw = response.read()
        try:
            answer = json.loads(raw)
        except ValueError as error:
            raise UpstreamFailed(
                f"The chat model at {self._url} answered with something that is not JSON; "
                "check OPENAI_BASE_URL points at an OpenAI-compatible /v1 endpoint."
            ) from error
        if not isinstance(answer, dict):
            raise UpstreamFailed(f"The chat model at {self._url} answered with JSON that is not an object.")
        return answer

    def stream(self, body: dict[str, Any]) -> Iterator[str]:
        response = self._open(body)
        return self._events(response)

    def _events(self, response: HTTPResponse) -> Iterator[str]:
        try:
            for raw in response:
                line = raw.decode("utf-8").strip()
                if not line.startswith(_SSE_DATA):
                    continue  # blank separators, comments (": keep-alive"), event names
                payload = line[len(_SSE_DATA) :].strip()
                if payload == _DONE:
                    return
                yield payload
        except OSError as error:  # timeouts included
            raise UpstreamFailed(f"The chat model at {self._url} stopped mid-stream ({error}).") from error
        finally:
            response.close()

    def _open(self, body: dict[str, Any]) -> HTTPResponse:
        request = urllib.request.Request(
            self._url,
            data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        if self._api_key:
            request.add_header("Authorization", f"Bearer {self._api_key}")
        try:
            response: HTTPResponse = urllib.request.urlopen(request, timeout=self._timeout_s)
        except urllib.error.HTTPError as error:
            raise self._refused(error) from error
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise UpstreamFailed(
                f"The chat model at {self._url} is unreachable ({reason}); check OPENAI_BASE_URL "
                "and that the model server is up."
            ) from error
        return response

    def _refused(self, error: urllib.error.HTTPError) -> Exception:
        raw = error.read()
        error.close()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = {"error": {"message": raw.decode("utf-8", "replace")[:2000], "type": "upstream_error"}}
        if 400 <= error.code < 500:
            return UpstreamRejected(f"The chat model refused the request ({error.code}).", error.code, body)
        part = body.get("error") if isinstance(body, dict) else None
        detail = part.get("message") if isinstance(part, dict) else part
        return UpstreamFailed(
            f"The chat model at {self._url} failed ({error.code}: {detail or error.reason}); retry later."
        )
