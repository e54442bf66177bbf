"""Domain errors. They carry no HTTP codes: `memory_engine.edge.http` maps them once for every route."""

from __future__ import annotations

from typing import Any


class MemoryEngineError(Exception):
    """Base of every error the engine raises on purpose; `message` is safe to show a caller."""

    def __init__(self, message: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors or []


class InvalidInput(MemoryEngineError):
    """The request names something that cannot work (field-level problems go in `errors`)."""


class NotFound(MemoryEngineError):
    """The session, memory, dialog or scope does not exist for this tenant."""


class Conflict(MemoryEngineError):
    """The request contradicts what is stored (same dialog uuid with other content, target exists)."""


class Unauthorized(MemoryEngineError):
    """No usable API key."""


class PayloadTooLarge(MemoryEngineError):
    """The body or one of its fields is over a documented limit."""


class RateLimited(MemoryEngineError):
    """Too many requests for this key; `retry_after` seconds tells when to come back."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(MemoryEngineError):
    """A dependency (store, queue, index, model) is down; the request wrote nothing and may be retried."""


class DeadlineExceeded(MemoryEngineError):
    """The work ran past its deadline (`memory_engine.deadline`) and was stopped; nothing was
    half-written, and the request may be retried with less to do."""


class Cancelled(MemoryEngineError):
    """The work was stopped because nobody waits for it any more: the client closed its
    connection, or the server or worker is shutting down."""


class UpstreamFailed(MemoryEngineError):
    """The upstream model could not answer: unreachable, timed out, or failed (5xx)."""


class UpstreamRejected(MemoryEngineError):
    """The upstream model refused the request (4xx), told in the engine's words
    (`adapters.openai.refusals`): `status` is what the caller gets (400 for a request the model
    found invalid, 413, 429 with `retry_after`, 502 where the fault is the server's, such as the
    model refusing its key), `code` the model's own error code when it is a plain identifier. The
    model's own text never reaches the caller: it may quote an internal URL or a key."""

    def __init__(
        self,
        message: str,
        status: int,
        errors: list[dict[str, Any]] | None = None,
        code: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message, errors)
        self.status = status
        self.code = code
        self.retry_after = retry_after
