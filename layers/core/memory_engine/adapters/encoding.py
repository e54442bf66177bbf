"""Encodings every store adapter shares: times as sortable UTC text, embeddings as float32 bytes."""

from __future__ import annotations

import base64
import math
import struct
import sys
from array import array
from collections.abc import Sequence
from datetime import UTC, datetime


def to_text(moment: datetime) -> str:
    """ISO 8601 in UTC with fixed width, so stored times also sort as text. Naive means UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def pack_vector(values: Sequence[float]) -> bytes:
    """float32 little-endian, whatever the machine's byte order (the data may move machines).

    A 4096-dimensional embedding is 16 KB this way, against some 80 KB as a list of numbers.
    """
    packed = array("f", values)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def unpack_vector(blob: bytes | None) -> list[float]:
    if not blob:
        return []
    packed = array("f")
    packed.frombytes(blob)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tolist()


def unit_vector(vector: Sequence[float]) -> list[float]:
    """The vector scaled to length 1 (a zero vector stays zero): dot products become cosines."""
    norm = math.sqrt(sum(value * value for value in vector))
    return [value / norm for value in vector] if norm > 0 else [float(value) for value in vector]


def pack_half_text(values: Sequence[float]) -> str:
    """float16 little-endian, base64: a vector that is only read back (never searched) as a JSON
    string of 4 characters per 3 bytes, some 7 times shorter than its numbers written out."""
    return base64.b64encode(struct.pack(f"<{len(values)}e", *values)).decode("ascii")


def unpack_half_text(text: str) -> list[float]:
    raw = base64.b64decode(text)
    return list(struct.unpack(f"<{len(raw) // 2}e", raw))
