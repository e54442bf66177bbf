"""What the sync and async clients share: where the API is and with which key, when to retry and
how long to wait, and how an answer becomes a result or an exception."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx
from pydantic import ValidationError

from memory_engine_client.call import Call, check_encodable
from memory_engine_client.errors import ApiError, TransportError, Unauthorized, error_for
from memory_engine_client.models import SessionResponse

T = TypeVar("T")

URL_VARIABLE = "MEMORY_ENGINE_URL"
KEY_VARIABLE = "MEMORY_ENGINE_API_KEY"
DEFAULT_URL = "http://127.0.0.1:8080"  # `make run`'s server
# Under API Gateway's 29 s and the functions' 28 s, so the API's own timeout answer arrives first.
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class Connection:
    """The API's base URL (a deployed stack's includes its stage: `https://…/prod`) and the key."""

    url: str
    api_key: str | None

    @classmethod
    def resolve(cls, url: str | None, api_key: str | None) -> Connection:
        """Arguments first, then MEMORY_ENGINE_URL / MEMORY_ENGINE_API_KEY, then the local server."""
        chosen = url or os.environ.get(URL_VARIABLE) or DEFAULT_URL
        return cls(url=chosen.rstrip("/"), api_key=api_key or os.environ.get(KEY_VARIABLE) or None)

    def request(self, call: Call[Any]) -> httpx.Request:
        check_encodable(call.body)
        check_encodable(dict(call.params))
        headers = {"Accept": "application/json"}
        if call.auth:
            if not self.api_key:
                raise Unauthorized(
                    f"No API key: pass api_key= or set {KEY_VARIABLE} (`make run` prints the local one)."
                )
            headers["Authorization"] = f"Bearer {self.api_key}"
        return httpx.Request(
            call.method,
            self.url + call.path,
            params=dict(call.params) or None,
            json=call.body,
            headers=headers,
        )


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for answers that say "later" (429 and 503) and for connections that never reached
    the API; never for any other status (a 4xx will not change, and a 5xx may have half-run).
    Waits `Retry-After` when the API sends it (up to `longest_wait`), otherwise an exponential
    backoff with jitter."""

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    longest_wait: float = 60.0
    statuses: frozenset[int] = frozenset({429, 503})

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `attempt` (0 for the first retry)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.longest_wait)
        ceiling = min(self.max_backoff, self.backoff * 2**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def retry_after(response: httpx.Response) -> float | None:
    """The `Retry-After` header in seconds: a number, or an HTTP date."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return (when - datetime.now(UTC)).total_seconds()


def outcome(call: Call[T], response: httpx.Response) -> T:
    """The call's result from a success answer, or the exception an error answer stands for."""
    if response.is_success:
        try:
            answer = response.json() if response.content else None
        except ValueError as error:
            raise ApiError(
                f"{call.method} {call.path} answered {response.status_code} with a body that is not JSON",
                status=response.status_code,
                body=response.text,
            ) from error
        try:
            return call.read(answer)
        except ValidationError as error:
            raise ApiError(
                f"{call.method} {call.path} answered {response.status_code} with a body this client does "
                f"not read (is the client older or newer than the API?): {error}",
                status=response.status_code,
                body=answer,
            ) from error
    raise error_for(response.status_code, response.text, retry_after(response))


def unreachable(call: Call[Any], error: httpx.TransportError) -> TransportError:
    """The error for a request that got no answer, always with words (httpx's own are sometimes
    empty: a connection reset reads as a bare ReadError)."""
    if isinstance(error, httpx.TimeoutException):
        what = "timed out" + ("" if never_sent(error) else " after it was sent (it may still be running)")
    elif isinstance(error, httpx.ConnectError):
        what = "could not connect (refused, or the host is unreachable)"
    else:
        what = "lost its connection (reset or closed by the server before an answer)"
    detail = str(error) or type(error).__name__
    retryable = never_sent(error) or not isinstance(error, httpx.TimeoutException)
    return TransportError(f"{call.method} {call.path} {what}: {detail}", body=detail, retryable=retryable)


def never_sent(error: httpx.TransportError) -> bool:
    """A connection that was never made: safe to try again whatever the route."""
    return isinstance(error, httpx.ConnectError | httpx.ConnectTimeout)


def extraction_done(shown: SessionResponse, at_most_buffered: int) -> bool:
    return (shown.counts.buffered or 0) <= at_most_buffered


def waited_too_long(session_uuid: str, shown: SessionResponse, timeout: float) -> str:
    return (
        f"session {session_uuid} still has {shown.counts.buffered} turns waiting for extraction after "
        f"{timeout:g} s (is the worker running? on AWS, see the queue's dead letters)"
    )
