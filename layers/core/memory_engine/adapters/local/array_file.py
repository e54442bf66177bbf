"""A file of named numpy arrays and string columns, read in one go and checked with one CRC-32.

What the local index keeps a shard in (`shard_file`): arrays come back as writable views of the
one mapping of the file (nothing copied), strings are split out of one blob each.

File layout: `MAGIC`, the header's length (uint64), a JSON header naming every array (dtype,
shape, offset) and string column (count, codec), then the arrays, each at a 64-byte boundary.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["ArrayFileError", "read_arrays", "write_arrays"]

MAGIC = b"MEARRAY1"
_LENGTH = struct.Struct("<Q")
_ALIGN = 64
_SEP = "\x00"


class ArrayFileError(Exception):
    """An array file is missing, short, damaged or not one of ours."""


def write_arrays(path: Path, arrays: dict[str, Any], strings: dict[str, Sequence[str]]) -> list[int]:
    """Write arrays and string columns to `path` atomically (fsynced); returns [size, CRC-32]."""
    import numpy as np

    blobs: dict[str, Any] = {name: np.ascontiguousarray(array) for name, array in arrays.items()}
    codecs: dict[str, list[Any]] = {}
    for name, values in strings.items():
        joined = _SEP.join(values)
        # The fast codec splits on NUL; a string holding NUL itself falls back to JSON.
        codec = "nul" if joined.count(_SEP) == max(len(values) - 1, 0) else "json"
        raw = joined.encode() if codec == "nul" else json.dumps(list(values)).encode()
        blobs[f"str:{name}"] = np.frombuffer(raw, dtype=np.uint8)
        codecs[name] = [len(values), codec]
    layout: dict[str, list[Any]] = {}
    at = 0
    for name, array in blobs.items():
        layout[name] = [array.dtype.str, list(array.shape), at]
        at += _padded(array.nbytes)
    header = json.dumps({"arrays": layout, "strings": codecs}).encode()
    start = _padded(len(MAGIC) + _LENGTH.size + len(header))
    head = MAGIC + _LENGTH.pack(len(header)) + header
    pieces: list[Any] = [head + b"\0" * (start - len(head))]
    for array in blobs.values():
        pieces.append(memoryview(array).cast("B") if array.nbytes else b"")
        pieces.append(b"\0" * (_padded(array.nbytes) - array.nbytes))
    tmp = path.with_name(path.name + ".tmp")
    crc = size = 0
    with open(tmp, "wb") as handle:
        for piece in pieces:
            handle.write(piece)
            crc = zlib.crc32(piece, crc)
            size += len(piece)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    return [size, crc]


def read_arrays(path: Path, size: int, crc: int) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The arrays (writable views of one mapping of the file) and string columns of a file
    `write_arrays` wrote, after checking its size and CRC-32 (one pass over the bytes)."""
    import numpy as np

    try:
        if path.stat().st_size != size:
            raise ArrayFileError(f"index file {path} is damaged (its size differs)")
        with open(path, "rb") as handle:
            # A private copy-on-write mapping: no buffer to allocate and fill, the page cache's
            # pages are used as they are, and a write to an array (an update in place) stays in
            # this process. Files are replaced, never truncated, so the mapping stays whole.
            buffer = mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_COPY)
    except FileNotFoundError as error:
        raise ArrayFileError(f"index file {path} is missing") from error
    view = memoryview(buffer)
    if zlib.crc32(view) != crc:  # zlib releases the GIL: a graph loads meanwhile
        raise ArrayFileError(f"index file {path} is damaged (its checksum differs)")
    try:
        if bytes(view[: len(MAGIC)]) != MAGIC:
            raise ValueError("no magic")
        (length,) = _LENGTH.unpack_from(view, len(MAGIC))
        header = json.loads(bytes(view[len(MAGIC) + _LENGTH.size : len(MAGIC) + _LENGTH.size + length]))
        start = _padded(len(MAGIC) + _LENGTH.size + length)
        arrays: dict[str, Any] = {}
        for name, (dtype, shape, offset) in header["arrays"].items():
            count = int(np.prod(shape, dtype=np.int64))
            arrays[name] = np.frombuffer(buffer, dtype=dtype, count=count, offset=start + offset).reshape(
                shape
            )
        strings = {
            name: _strings(arrays.pop(f"str:{name}"), count, codec)
            for name, (count, codec) in header["strings"].items()
        }
    except (ValueError, KeyError, TypeError, struct.error) as error:  # checksum matched: not ours
        raise ArrayFileError(f"index file {path} is not an array file ({error})") from error
    return arrays, strings


def _strings(blob: Any, count: int, codec: str) -> list[str]:
    if codec == "json":
        values: list[str] = json.loads(blob.tobytes())
    else:
        raw = blob.tobytes()
        # An ASCII blob decodes at memory speed; any other char would widen the whole decoded
        # blob (4 bytes a char for one emoji), so the parts are decoded one by one instead.
        if not count:
            values = []
        elif raw.isascii():
            values = raw.decode("ascii").split(_SEP)
        else:
            values = [part.decode() for part in raw.split(_SEP.encode())]
    if len(values) != count:
        raise ValueError(f"{len(values)} strings where {count} were written")
    return values


def _padded(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN
