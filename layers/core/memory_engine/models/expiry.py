"""When a memory stops existing, as a client may ask for it: one rule on every route that takes it.

A request names either `expires_at` (an ISO 8601 date-time, UTC when it names no offset) or
`ttl_seconds` (from the request's arrival), never both; the use case turns either into the
memory's `expires_at` with the engine's clock (`expiry_of`), refusing a time already past.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import ConfigDict, Field, PlainValidator, TypeAdapter, WithJsonSchema, model_validator

from memory_engine.errors import InvalidInput
from memory_engine.models.base import Model

__all__ = ["MAX_TTL_SECONDS", "Expiring", "ExpiryTime", "expiry_of"]

# Ten years: a bound that no temporary fact needs to pass, and far from any date overflow.
MAX_TTL_SECONDS = 10 * 365 * 86_400
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
_DIGITS = re.compile(r"^\s*[+-]?\d+(\.\d*)?\s*$")
# Built on first use, like every model here (models/base.py): an import builds no validator.
_ISO = TypeAdapter(datetime, config=ConfigDict(defer_build=True))


def parse_expiry(value: Any) -> datetime:
    """A client's expiry time in UTC, or ValueError saying what the rule is."""
    if isinstance(value, datetime):  # a Python caller's (an import)
        moment = value
    elif isinstance(value, str) and not _DIGITS.match(value):
        try:
            moment = _ISO.validate_python(value)
        except ValueError:
            raise ValueError("must be an ISO 8601 date-time, e.g. 2027-01-01T00:00:00Z") from None
    else:
        raise ValueError(
            "must be an ISO 8601 date-time string, e.g. 2027-01-01T00:00:00Z (or send ttl_seconds)"
        )
    try:
        moment = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    except OverflowError:  # year 1 at +01:00: no UTC instant
        raise ValueError(f"must be a time between now and {LATEST:%Y-%m-%d}") from None
    if moment >= LATEST:
        raise ValueError(f"must be before {LATEST:%Y-%m-%d}")
    return moment


ExpiryTime = Annotated[
    datetime,
    PlainValidator(parse_expiry),
    WithJsonSchema(
        {"type": "string", "format": "date-time", "description": "ISO 8601; UTC without an offset"}
    ),
]


class Expiring(Model):
    """The expiry fields of a request body: at most one of them."""

    expires_at: ExpiryTime | None = Field(
        None, description="when the memory stops existing (ISO 8601, in the future); or send ttl_seconds"
    )
    ttl_seconds: int | None = Field(
        None, ge=1, le=MAX_TTL_SECONDS, description="seconds from now until the memory stops existing"
    )

    @model_validator(mode="after")
    def _one_of(self) -> Expiring:
        if self.expires_at is not None and self.ttl_seconds is not None:
            raise ValueError("send expires_at or ttl_seconds, not both")
        return self


def expiry_of(request: Expiring, now: datetime) -> datetime | None:
    """The memory's `expires_at` for this request, read at `now`; InvalidInput (a 422 naming the
    field) for a time already past, which would store a memory no read could ever return."""
    if request.ttl_seconds is not None:
        return now + timedelta(seconds=request.ttl_seconds)
    if request.expires_at is not None and request.expires_at <= now:
        raise InvalidInput(
            f"expires_at {request.expires_at.isoformat()} is not in the future (now {now.isoformat()}): "
            "send a later time, or ttl_seconds.",
            [{"field": "expires_at", "message": "must be in the future"}],
        )
    return request.expires_at
