"""An upstream model's 4xx, told to the caller in the engine's own words.

The endpoint's body is not passed on: its message can quote an internal URL or the key it was sent
(`sk-live-…`), and its 401 is about the server's credentials, not the caller's. What the caller
reads is a fixed message per kind of refusal, with the status it can act on; the upstream's own
`code` and `param` are added only when they are short identifiers (`context_length_exceeded`,
`messages`), which name the problem without room for a URL or a key. The body itself goes to the
server's log, redacted (`upstream._fail`).
"""

from __future__ import annotations

import math
import re
from typing import Any

from memory_engine.errors import UpstreamRejected

_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-\[\]]{0,63}$")
_INVALID = (
    "The chat model refused the request as invalid ({status}){reason}: check the fields it reads ({fields})."
)
_FIELDS = "`model`, `messages` and the sampling options"
_MAX_RETRY_AFTER = 3600


def rejected(status: int, body: Any, retry_after: str | None = None) -> UpstreamRejected:
    """The error for an upstream answer of 4xx `status` with JSON `body` (any shape) and its
    `Retry-After` header, if any."""
    code, param = _identifier(body, "code"), _identifier(body, "param")
    reason = f": {code}" if code else ""
    errors = [{"field": param, "message": f"refused by the chat model{reason}"}] if param else []
    if status in (400, 422):
        return UpstreamRejected(
            _INVALID.format(status=status, reason=reason, fields=_FIELDS), 400, errors, code
        )
    if status == 404:
        message = (
            "The chat model answered 404: the model the request names (`model`, or the server's "
            "default) is not served there; name another model, or ask the operator to check "
            "OPENAI_BASE_URL."
        )
        return UpstreamRejected(
            message, 400, [{"field": "model", "message": "not found by the chat model"}], code
        )
    if status == 413:
        message = "The chat model refused the request as too large (413): send fewer or shorter messages."
        return UpstreamRejected(message, 413, errors, code)
    if status == 429:
        message = "The chat model is rate-limiting this server (429): retry later."
        return UpstreamRejected(message, 429, [], code, retry_after=_seconds(retry_after))
    if status in (401, 403):
        message = (
            f"The chat model refused this server's credentials ({status}): nothing is wrong with "
            "your request or key; the operator should check the model's key (OPENAI_API_KEY or its "
            "secret)."
        )
        return UpstreamRejected(message, 502, [], None)
    message = f"The chat model refused the request ({status}); retry later, or ask the operator to check it."
    return UpstreamRejected(message, 502, [], code)


def _identifier(body: Any, name: str) -> str | None:
    part = body.get("error") if isinstance(body, dict) else None
    value = part.get(name) if isinstance(part, dict) else None
    return value if isinstance(value, str) and _IDENTIFIER.match(value) else None


def _seconds(header: str | None) -> int:
    """`Retry-After` in whole seconds (1 to an hour), 1 when absent or not a number of seconds."""
    try:
        seconds = float(header) if header is not None else 1.0
    except ValueError:
        return 1
    return max(1, min(_MAX_RETRY_AFTER, math.ceil(seconds))) if math.isfinite(seconds) else 1
