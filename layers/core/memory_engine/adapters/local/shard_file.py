"""One shard of the local index as flat arrays (an `array_file`): written at a checkpoint, read at start.

A pickled shard (format 1) made a start unpickle ~900k tuples, datetimes and postings objects at
100k memories: most of a 12-16 s restart. Here a load decodes the document ids and a few small
tables, and little else: postings and vectors are used in place, each document's metadata stays
in columns (`LoadedRows`) until a search or a write first reads it, texts stay UTF-8 in the file's
buffer, and values that repeat (sessions, timestamps, memory ids) are stored once with a code per
document. Postings and vectors name documents by position in the id column, so each id is
decoded once and shared.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory_engine.adapters.local.array_bm25 import ArrayBm25, Bm25Stats
from memory_engine.adapters.local.array_file import ArrayFileError
from memory_engine.adapters.local.shards import Meta, Shard
from memory_engine.adapters.local.vectors import ExactVectors, GraphParams, GraphVectors

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["LoadedRows", "read_shard", "shard_arrays"]

_SOURCE_SEP = b"\x00"


class LoadedRows:
    """A loaded shard's metadata columns; `row` builds one document's tuple as `Shard.meta` holds it."""

    __slots__ = ("_created", "_memory", "_occurred", "_session", "_sources", "_text", "memories")

    def __init__(self, arrays: dict[str, Any], strings: dict[str, list[str]], count: int) -> None:
        self._session = _Coded(arrays["meta.session"], strings["meta.session.table"], count)
        self._memory = _Coded(arrays["meta.memory"], strings["meta.memory.table"], count)
        self._created = _Coded(arrays["meta.created"], _times(strings["meta.created.table"]), count)
        self._occurred = _Coded(arrays["meta.occurred"], _times(strings["meta.occurred.table"]), count)
        self._text = _Blob(arrays["meta.text.blob"], arrays["meta.text.ends"], count)
        self._sources = _Blob(arrays["meta.sources.blob"], arrays["meta.sources.ends"], count)
        self.memories = self._memory

    def row(self, at: int) -> Meta:
        sources = self._sources.raw(at)
        return (
            self._session[at],
            self._text.raw(at).decode(),
            tuple(part.decode() for part in sources[1:].split(_SOURCE_SEP)) if sources else (),
            self._created[at],
            self._memory[at],
            self._occurred[at],
        )


class _Coded:
    """A column of values stored once each in `table`, with a code per row (-1: None)."""

    __slots__ = ("codes", "table")

    def __init__(self, codes: Any, table: list[Any], count: int) -> None:
        if len(codes) != count or (count and not -1 <= int(codes.min()) <= int(codes.max()) < len(table)):
            raise ArrayFileError("a shard file's coded column does not match its table")
        self.codes, self.table = codes, [*table, None]  # code -1 reads the None at the end

    def __getitem__(self, at: int) -> Any:
        return self.table[self.codes[at]]

    def gathered(self, at: Any, fresh: list[Any]) -> tuple[list[Any], NDArray[np.int32]]:
        """Table and codes for the rows at positions `at` then the values `fresh`; values no row
        uses any more are dropped from the table."""
        import numpy as np

        table = self.table[:-1]
        code_of = {value: code for code, value in enumerate(table)}
        for value in fresh:
            if value is not None and value not in code_of:
                code_of[value] = len(table)
                table.append(value)
        added = [-1 if value is None else code_of[value] for value in fresh]
        codes = np.concatenate([self.codes[at], np.asarray(added, dtype=np.int32)]).astype(np.int32)
        used = np.unique(codes[codes >= 0])
        if len(used) < len(table):
            renumbered = np.full(len(table), -1, dtype=np.int32)
            renumbered[used] = np.arange(len(used), dtype=np.int32)
            codes = np.where(codes >= 0, renumbered[np.maximum(codes, 0)], -1).astype(np.int32)
            table = [table[code] for code in used.tolist()]
        return table, codes


class _Blob:
    """A column of byte strings, concatenated, with each one's end (`ends[0]` is 0)."""

    __slots__ = ("blob", "ends")

    def __init__(self, blob: Any, ends: Any, count: int) -> None:
        if len(ends) != count + 1 or (len(ends) and (ends[0] != 0 or ends[-1] != len(blob))):
            raise ArrayFileError("a shard file's text column does not add up")
        self.blob, self.ends = memoryview(blob), ends

    def raw(self, at: int) -> bytes:
        return bytes(self.blob[self.ends[at] : self.ends[at + 1]])

    def gathered(self, at: Any, fresh: list[bytes]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
        """Blob and ends for the rows at positions `at`, then `fresh`: each run of consecutive
        positions (all of them, after a start with no deletes) is copied as one slice."""
        import numpy as np

        starts, stops = self.ends[at], self.ends[at + 1]
        breaks = (np.flatnonzero(np.diff(at) != 1) + 1).tolist()
        first, last = [0, *breaks], [b - 1 for b in breaks] + [len(at) - 1]
        pieces: list[Any] = [self.blob[starts[a] : stops[b]] for a, b in zip(first, last, strict=True)]
        ends = np.zeros(len(at) + len(fresh) + 1, dtype=np.int64)
        np.cumsum(np.concatenate([stops - starts, [len(part) for part in fresh]]), out=ends[1:])
        return np.frombuffer(b"".join([*pieces, *fresh]), dtype=np.uint8), ends


def _times(table: list[str]) -> list[datetime]:
    return [datetime.fromisoformat(value) for value in table]


def shard_arrays(shard: Shard) -> tuple[dict[str, Any], dict[str, Sequence[str]]]:
    """A shard's metadata, postings, (exact shards) vectors or (graph shards) labels, and window
    vectors as arrays and string columns; a graph's own file is written by `GraphVectors.save`."""
    ids, arrays, strings = _meta_columns(shard)
    position = dict(zip(ids, range(len(ids)), strict=True))
    bm25 = shard.bm25.to_arrays()
    _put_refs("bm25.ids", bm25.pop("ids"), position, arrays, strings)
    strings["bm25.terms"] = bm25.pop("terms")
    arrays.update({f"bm25.{name}": array for name, array in bm25.items()})
    vectors = shard.vectors
    if isinstance(vectors, GraphVectors):
        graph_ids, arrays["graph.labels"], arrays["graph.deleted"] = vectors.persisted()
        _put_refs("graph.ids", graph_ids, position, arrays, strings)
    else:
        assert isinstance(vectors, ExactVectors)
        _put_refs("exact.ids", vectors.ids, position, arrays, strings)
        arrays["exact.matrix"] = vectors.live()
    if shard.windows is not None and len(shard.windows):
        # Optional: a file without them (written before window vectors) loads as a shard without.
        _put_refs("window.ids", shard.windows.ids, position, arrays, strings)
        arrays["window.matrix"] = shard.windows.live()
    return arrays, strings


def _meta_columns(shard: Shard) -> tuple[list[str], dict[str, Any], dict[str, Sequence[str]]]:
    """The metadata columns: documents still in the loaded columns first, copied through as
    bytes and codes (a checkpoint after a start neither decodes them nor keeps them as Python
    objects), then those written or read since, encoded from their tuples."""
    import numpy as np

    kept = [(doc_id, value) for doc_id, value in shard.meta.items() if isinstance(value, int)]
    fresh = [(doc_id, value) for doc_id, value in shard.meta.items() if not isinstance(value, int)]
    ids = [doc_id for doc_id, _ in kept] + [doc_id for doc_id, _ in fresh]
    rows: list[Meta] = [value for _, value in fresh]
    at = np.asarray([value for _, value in kept], dtype=np.int64)
    loaded = shard.loaded if len(at) else None
    assert loaded is None or isinstance(loaded, LoadedRows)
    arrays: dict[str, Any] = {}
    strings: dict[str, Sequence[str]] = {"meta.ids": ids}
    texts = [row[1].encode() for row in rows]
    # A leading separator tells one empty source ("\0") from none ("").
    sources = [b"".join(_SOURCE_SEP + source.encode() for source in row[2]) for row in rows]
    for name, fresh_bytes in (("text", texts), ("sources", sources)):
        blob: _Blob | None = getattr(loaded, f"_{name}") if loaded else None
        columns = blob.gathered(at, fresh_bytes) if blob else _joined(fresh_bytes)
        arrays[f"meta.{name}.blob"], arrays[f"meta.{name}.ends"] = columns
    for name, column in (("session", 0), ("memory", 4), ("created", 3), ("occurred", 5)):
        values = [row[column] for row in rows]
        coded: _Coded | None = getattr(loaded, f"_{name}") if loaded else None
        table, arrays[f"meta.{name}"] = coded.gathered(at, values) if coded else _coded(values)
        strings[f"meta.{name}.table"] = [value.isoformat() for value in table] if column in (3, 5) else table
    return ids, arrays, strings


def read_shard(
    arrays: dict[str, Any],
    strings: dict[str, list[str]],
    stats: Bm25Stats,
    dim: int,
    params: GraphParams,
    graph: Any = None,
) -> tuple[Shard, Callable[[], dict[str, list[str]]]]:
    """The shard `shard_arrays` described (with `graph`, its loaded voyager index, for a graph
    shard), counted into `stats`; and what gives per memory id its documents in the shard (as
    loaded: `TenantState.parts` calls it when first needed)."""
    ids = strings["meta.ids"]
    shard = Shard.__new__(Shard)
    shard.loaded = rows = LoadedRows(arrays, strings, len(ids))
    shard.meta = dict(zip(ids, range(len(ids)), strict=True))
    if len(shard.meta) != len(ids):
        raise ArrayFileError("a shard file names a document twice")
    bm25 = {
        name[5:]: array for name, array in arrays.items() if name.startswith("bm25.") and name != "bm25.ids"
    }
    bm25["ids"], bm25["terms"] = _refs("bm25.ids", ids, arrays, strings), strings["bm25.terms"]
    shard.bm25 = ArrayBm25.from_arrays(bm25, stats)
    if "graph.ids" in arrays:
        if graph is None:
            raise ArrayFileError("a graph shard's graph file was not loaded")
        graph_ids = _refs("graph.ids", ids, arrays, strings)
        shard.vectors = GraphVectors.restore(
            dim, params, graph, graph_ids, arrays["graph.labels"], arrays["graph.deleted"]
        )
    else:
        matrix = arrays["exact.matrix"]
        if matrix.ndim != 2 or matrix.shape[1] != dim:
            raise ArrayFileError(f"a shard file's vectors are not {dim}-dimensional")
        shard.vectors = ExactVectors.restore(_refs("exact.ids", ids, arrays, strings), matrix)
    shard.windows = None
    if "window.ids" in arrays:
        windows = arrays["window.matrix"]
        window_ids = _refs("window.ids", ids, arrays, strings)
        if windows.ndim != 2 or windows.shape != (len(window_ids), dim):
            raise ArrayFileError(f"a shard file's window vectors are not {dim}-dimensional, one per id")
        shard.windows = ExactVectors.restore(window_ids, windows)
    return shard, functools.partial(_parts, ids, rows.memories)


def _parts(ids: list[str], memories: _Coded) -> dict[str, list[str]]:
    """Per memory id, the documents pointing at it: grouped with one sort, not a loop per row."""
    import numpy as np

    codes = memories.codes
    pointing = np.flatnonzero(codes >= 0)
    if not len(pointing):
        return {}
    order = pointing[np.argsort(codes[pointing], kind="stable")]
    grouped = codes[order]
    cuts = [0, *(np.flatnonzero(np.diff(grouped)) + 1).tolist(), len(order)]
    members = [ids[at] for at in order.tolist()]
    table = memories.table
    return {
        table[code]: members[a:b]
        for code, a, b in zip(grouped[cuts[:-1]].tolist(), cuts[:-1], cuts[1:], strict=True)
    }


def _joined(parts: list[bytes]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    import numpy as np

    ends = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(part) for part in parts], out=ends[1:])
    return np.frombuffer(b"".join(parts), dtype=np.uint8), ends


def _coded(values: list[Any]) -> tuple[list[Any], NDArray[np.int32]]:
    """Distinct non-None values once, and per value its code (-1: None)."""
    import numpy as np

    code_of: dict[Any, int] = {}
    codes = [-1 if value is None else code_of.setdefault(value, len(code_of)) for value in values]
    return list(code_of), np.asarray(codes, dtype=np.int32)


def _put_refs(
    name: str,
    values: Sequence[str],
    position: dict[str, int],
    arrays: dict[str, Any],
    strings: dict[str, Any],
) -> None:
    """Ids as positions in `meta.ids` where they are there (code >= 0), else in a column of their
    own (code -1 - n: a removed document a graph still labels, a free BM25 slot's "")."""
    import numpy as np

    extra: list[str] = []
    codes: list[int] = []
    for value in values:
        at = position.get(value)
        if at is None:
            extra.append(value)
            at = -len(extra)
        codes.append(at)
    arrays[name], strings[f"{name}.extra"] = np.asarray(codes, dtype=np.int64), extra


def _refs(name: str, ids: list[str], arrays: dict[str, Any], strings: dict[str, list[str]]) -> list[str]:
    codes = arrays[name]
    extra = strings[f"{name}.extra"]
    if not extra:
        return [ids[at] for at in codes.tolist()]
    return [ids[at] if at >= 0 else extra[-1 - at] for at in codes.tolist()]
