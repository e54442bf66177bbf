"""When a turn was said, as a client may send it: one rule, the same on every route.

A timestamp is a JSON number of unix seconds or an ISO 8601 string (UTC when it names no offset),
between 2000-01-01T00:00:00Z and one day past the server's clock. Anything else is a 422 naming
the field. pydantic's own reading guessed: a number past 2e10 was taken for milliseconds (so
`20000000001` became 1970), and year 1 was accepted; here a number is always seconds, and one
that would be a valid instant in milliseconds is refused with a message saying so.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import ConfigDict, PlainValidator, TypeAdapter, WithJsonSchema

__all__ = ["EARLIEST", "LEEWAY", "Timestamp", "parse_timestamp", "rfc3339"]

EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
# Clocks disagree a little, and a client in another time zone may send its local time as UTC.
LEEWAY = timedelta(days=1)
_DIGITS = re.compile(r"^\s*[+-]?\d+(\.\d*)?\s*$")
# Built on first use, like every model here (models/base.py): an import builds no validator.
_ISO = TypeAdapter(datetime, config=ConfigDict(defer_build=True))
_SCHEMA = {
    "anyOf": [
        {"type": "string", "format": "date-time"},
        {"type": "number", "minimum": int(EARLIEST.timestamp())},
    ],
    "description": "unix seconds or ISO 8601, from 2000-01-01T00:00:00Z to one day from now",
}


def parse_timestamp(value: Any) -> datetime:
    """A client's timestamp in UTC, or ValueError saying what the rule is."""
    if isinstance(value, datetime):  # a Python caller's (an import, the benchmarks)
        moment = _in_utc(value)
    elif isinstance(value, str):
        moment = _in_utc(_from_iso(value))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        moment = _from_seconds(value)
    else:
        raise ValueError("must be unix seconds (a JSON number) or an ISO 8601 string")
    latest = datetime.now(UTC) + LEEWAY
    if not EARLIEST <= moment <= latest:
        raise ValueError(
            f"must be between {EARLIEST:%Y-%m-%d} and one day from now (UTC); got {moment.isoformat()}"
        )
    return moment


def _from_iso(text: str) -> datetime:
    if _DIGITS.match(text):
        raise ValueError("send unix seconds as a JSON number, not a string (or an ISO 8601 string)")
    try:
        return _ISO.validate_python(text)
    except ValueError:
        raise ValueError("must be an ISO 8601 date-time (2026-03-18T04:00:37Z) or unix seconds") from None


def _in_utc(moment: datetime) -> datetime:
    try:
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    except OverflowError:  # year 1 at +01:00: no UTC instant
        raise ValueError(f"must be between {EARLIEST:%Y-%m-%d} and one day from now (UTC)") from None


def _from_seconds(seconds: float) -> datetime:
    latest = (datetime.now(UTC) + LEEWAY).timestamp()
    if EARLIEST.timestamp() * 1000 <= seconds <= latest * 1000:
        raise ValueError(
            f"looks like milliseconds ({seconds:.0f}): send unix seconds ({seconds / 1000:.0f}), "
            "between 2000-01-01 and one day from now"
        )
    if not EARLIEST.timestamp() <= seconds <= latest:
        raise ValueError(f"must be unix seconds from {EARLIEST:%Y-%m-%d} to one day from now")
    return datetime.fromtimestamp(seconds, UTC)


Timestamp = Annotated[datetime, PlainValidator(parse_timestamp), WithJsonSchema(_SCHEMA)]


def rfc3339(moment: datetime) -> str:
    """An instant as the API writes it: RFC 3339 in UTC with microseconds, `Z` for the offset."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
