"""The local index's journal format: every write since the last snapshot, one framed record each.

A record is framed as its payload's length and CRC-32, then the payload (the pickled write), so
appending never rewrites the file and a reader can tell where a torn append (a crash in mid-write)
begins: everything before it is replayed, the tail is dropped and logged.
"""

from __future__ import annotations

import logging
import pickle
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["frame", "journal_name", "records"]

log = logging.getLogger("memory_engine.index")

_HEADER = struct.Struct("<II")  # payload length, CRC-32 of the payload


def journal_name(generation: int) -> str:
    return f"journal-{generation}.log"


def frame(record: tuple[Any, ...]) -> bytes:
    """One record as it is appended."""
    payload = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def records(path: Path) -> Iterator[tuple[Any, ...]]:
    """The journal's records in order, up to the first torn or damaged one (logged, then dropped)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    at = 0
    while at < len(data):
        header = data[at : at + _HEADER.size]
        if len(header) < _HEADER.size:
            break
        length, crc = _HEADER.unpack(header)
        payload = data[at + _HEADER.size : at + _HEADER.size + length]
        if len(payload) < length or zlib.crc32(payload) != crc:
            break
        yield pickle.loads(payload)
        at += _HEADER.size + length
    if at < len(data):
        log.warning(
            "index: journal %s ends in %d unreadable bytes (a torn write); they are ignored",
            path,
            len(data) - at,
        )
