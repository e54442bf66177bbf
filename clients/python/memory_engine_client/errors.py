"""What a call to memory-engine can fail with: one exception per kind of answer, each carrying the
API's error body (its message and the fields it names), so a caller can tell "fix this field" from
"come back later" without reading status codes."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel


class FieldError(BaseModel):
    """One field the API refused, and why (`field` is a dotted path such as `new_dialog.query`)."""

    field: str
    message: str


class ApiError(Exception):
    """An answer other than success. `status` is the HTTP status (None when no answer came back),
    `message` the API's own words, `errors` the fields it named, `body` the whole error body;
    `retryable` says whether the same request may succeed later (a refusal for now: 429, 503, a
    connection refused or reset), as the TypeScript client's errors do."""

    retryable = False

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        errors: list[FieldError] | None = None,
        body: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.errors = errors or []
        self.body = body
        self.retry_after = retry_after

    @property
    def fields(self) -> list[str]:
        return [error.field for error in self.errors]

    def __str__(self) -> str:
        prefix = f"{self.status}: " if self.status is not None else ""
        return prefix + self.message


class InvalidRequest(ApiError):
    """400 or 422: the request is wrong (each bad field is in `errors`); sending it again will not
    help. Also raised before sending, when the request fails the API's own model."""


class Unauthorized(ApiError):
    """401 or 403: no key, a wrong key, or a key without access to this route."""


class NotFound(ApiError):
    """404: the session, dialog, memory or user is not there (or was deleted)."""


class Conflict(ApiError):
    """409: the id is taken by something else (a dialog uuid with other content, a fork target)."""


class PayloadTooLarge(ApiError):
    """413: the body is over the API's size limit."""


class RateLimited(ApiError):
    """429 after the retries: too many requests for this key; `retry_after` says when to come back."""

    retryable = True


class ServerError(ApiError):
    """A 5xx: the service or a dependency of it failed."""


class Unavailable(ServerError):
    """503 after the retries: a dependency is down or busy, or the server has no room for another
    connection now; try again later."""

    retryable = True


class TransportError(ApiError):
    """No answer: the connection was refused, reset or closed, or the request timed out (`status`
    is None). Retryable, except a timeout once the request was sent (it may still be running)."""

    def __init__(self, message: str, *, retryable: bool = True, **rest: Any) -> None:
        super().__init__(message, **rest)
        self.retryable = retryable


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Unauthorized,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: InvalidRequest,
    429: RateLimited,
    503: Unavailable,
}


def error_for(status: int, text: str, retry_after: float | None = None) -> ApiError:
    """The exception for an error answer, whichever envelope it came in: the native one
    (`status`, `message`, `errors`), the game API's (`code`, `msg`, `data.errors`), OpenAI's
    (`error.message`, `error.param`), API Gateway's own (`message`), or plain text."""
    try:
        body: Any = json.loads(text) if text else None
    except ValueError:
        body = None
    message, errors = _read_body(body)
    kind = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return kind(
        message or text.strip()[:500] or f"HTTP {status}",
        status=status,
        errors=errors,
        body=body if body is not None else text,
        retry_after=retry_after,
    )


def _read_body(body: Any) -> tuple[str, list[FieldError]]:
    if not isinstance(body, dict):
        return "", []
    if isinstance(body.get("error"), dict):  # OpenAI's error object (chat, forget a user)
        error = body["error"]
        param = error.get("param")
        message = str(error.get("message") or "")
        return message, [FieldError(field=str(param), message=message)] if param else []
    message = next((body[key] for key in ("message", "msg", "Message") if body.get(key)), "")
    raw = body.get("errors")
    if raw is None and isinstance(body.get("data"), dict):  # the game envelope
        raw = body["data"].get("errors")
    errors = [
        FieldError(field=str(item.get("field", "body")), message=str(item.get("message", "")))
        for item in raw or []
        if isinstance(item, dict)
    ]
    return str(message or ""), errors
