"""What may reach a log: never an API key, and no dialogue text unless debug logging is on; and
the service's logger, which enforces it.

Exception messages can carry user text (a validation error quoting its input, a model's answer),
so outside debug an error is logged as its type and stack only: enough to find the code, nothing
of what the user said.
"""

from __future__ import annotations

import logging
import re
import traceback
from functools import lru_cache
from typing import Any

from aws_lambda_powertools import Logger

from memory_engine.settings import LogSettings, loaded

SERVICE = "memory-engine"

# Store keys (me_<id>_<secret>), the local key (me_<secret>), OpenAI-style provider keys
# (sk-…, sk-proj-…, sk-live-…: an upstream's error may quote the one it was sent) and whatever
# follows an auth scheme.
_KEY_PATTERNS = (
    re.compile(r"\bme_[A-Za-z0-9_-]{16,}|\bsk[-_][A-Za-z0-9_-]{16,}"),
    re.compile(r"(?i)\b(bearer|token)\s+[^\s\"',}]+"),
)
# Addresses inside text another service wrote (an upstream's error): internal hosts, signed URLs.
_URL = re.compile(r"(?i)\b(?:https?|wss?|s3|redis|postgres(?:ql)?|mongodb|amqp)://[^\s\"'<>)}\]]+")
# A key sent by mistake in a URL (`?key=`, `&api_key=`, `?token=` ...): the request line is logged.
_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:api[_-]?key|apikey|x-api-key|key|token|access[_-]?token|auth|authorization|"
    r"secret|password|sig|signature)=)[^&;#\s\"']*"
)
REDACTED = "[redacted]"


def redact(text: str) -> str:
    """`text` with anything that looks like an API key replaced."""
    text = _KEY_PATTERNS[0].sub(REDACTED, text)
    text = _QUERY_SECRET.sub(lambda found: f"{found.group(1)}{REDACTED}", text)
    return _KEY_PATTERNS[1].sub(lambda found: f"{found.group(1)} {REDACTED}", text)


def redact_foreign(text: str) -> str:
    """Text another service wrote (an upstream model's error message or body), as it may be
    logged or kept: keys and URLs (which can name internal hosts) replaced."""
    return redact(_URL.sub("[url]", text))


def debug_enabled() -> bool:
    return loaded(LogSettings).log_level.upper() == "DEBUG"


def error_details(error: BaseException) -> dict[str, Any]:
    """Log fields for an unexpected error: its type and stack; its message only in debug."""
    details: dict[str, Any] = {
        "error_type": type(error).__name__,
        "stack": "".join(traceback.extract_tb(error.__traceback__).format()),
    }
    if debug_enabled():
        details["error"] = redact(str(error))
    return details


class RedactingFilter(logging.Filter):
    """Rewrites a record's message with API keys redacted (defence in depth: nothing should log
    one, and if something does, the key still never reaches the output)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        for name, value in list(vars(record).items()):
            if name not in _RECORD_FIELDS and isinstance(value, str):
                setattr(record, name, redact(value))
        return True


# Attributes every LogRecord has; anything else came in through `extra=`.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None)))


@lru_cache(maxsize=1)
def logger() -> Logger:
    """The service's JSON logger, keys redacted. Here rather than beside the REST resolver
    (`http`): the worker, the authorizer and the deploy-time functions log without serving a route."""
    log = Logger(service=SERVICE)
    log.addFilter(RedactingFilter())
    return log
