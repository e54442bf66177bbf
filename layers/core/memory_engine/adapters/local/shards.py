"""One shard of the local index and a tenant's shards: the state `LocalSearchIndex` keeps.

A shard is one thread's documents of one kind: its vectors (exact or an HNSW graph), its BM25
postings, its turn documents' window vectors and what a hit echoes of each document. A tenant
holds its shards, the shard of each document, and each memory's turn documents (for cascading
deletes). numpy is imported only for type checking: importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from memory_engine.adapters.local.array_bm25 import ArrayBm25, Bm25Stats
from memory_engine.adapters.local.vectors import ExactVectors, Vectors
from memory_engine.ports import DocKind

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]

__all__ = ["Meta", "Rows", "Shard", "ShardKey", "TenantState"]

# What a shard keeps of a document besides its vector and postings (kind and thread: the shard's).
# (session_uuid, text, source_dialog_uuids, created_at, memory_id, occurred_at)
Meta = tuple[str, str, tuple[str, ...], datetime, str | None, datetime | None]
ShardKey = tuple[DocKind, str]


class Rows(Protocol):
    """Documents' metadata kept as columns (a shard loaded from disk), built into a tuple on use."""

    def row(self, at: int) -> Meta: ...


class Shard:
    """One thread's documents of one kind: vectors, postings and what a hit echoes.

    `meta` maps a document to its metadata, or (loaded from disk and not read since) to its
    position in `loaded`, so a start builds no per-document tuple; `row` builds it on first read
    and keeps it. Concurrent readers may both build one: replacing a key's value is atomic.
    """

    __slots__ = ("bm25", "loaded", "meta", "vectors", "windows")

    def __init__(self, vectors: Vectors, stats: Bm25Stats) -> None:
        self.vectors = vectors
        self.bm25 = ArrayBm25(stats=stats)
        self.meta: dict[str, Meta | int] = {}
        self.loaded: Rows | None = None
        # Turn documents' window vectors (float16, exact): never searched, only the cosine of a
        # candidate read (IndexHit.window). None until a document brings one.
        self.windows: ExactVectors | None = None

    def window_cosines(self, doc_ids: list[str], query: Matrix) -> list[float | None]:
        """The query's cosine to each document's window vector; None for one without."""
        windows = self.windows
        if windows is None:
            return [None] * len(doc_ids)
        held = [doc_id for doc_id in doc_ids if doc_id in windows.row_of]
        found = dict(zip(held, windows.cosines(held, query), strict=True)) if held else {}
        return [found.get(doc_id) for doc_id in doc_ids]

    def __len__(self) -> int:
        return len(self.meta)

    def row(self, doc_id: str) -> Meta:
        value = self.meta[doc_id]
        if isinstance(value, int):
            assert self.loaded is not None
            value = self.meta[doc_id] = self.loaded.row(value)
        return value


class TenantState:
    """One tenant's shards, the shard of each document, and each memory's turn documents."""

    __slots__ = ("_parts", "dim", "loaded_parts", "shards", "stats", "where")

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.shards: dict[ShardKey, Shard] = {}
        self.where: dict[str, ShardKey] = {}
        self.stats: dict[DocKind, Bm25Stats] = {}
        self._parts: dict[str, set[str]] = {}
        # Shards loaded from disk: their memories' documents, grouped on first use of `parts`.
        self.loaded_parts: list[Callable[[], dict[str, list[str]]]] = []

    @property
    def parts(self) -> dict[str, set[str]]:
        """Memory id -> its turn documents, for cascading deletes. Only writes read it, so a
        start leaves the loaded shards' grouping to the first write: every write that changes a
        loaded document's memory (or removes one that has a memory) reads this first, so the
        grouping as loaded is still true when it is made."""
        while self.loaded_parts:
            for memory_id, doc_ids in self.loaded_parts.pop()().items():
                held = self._parts.get(memory_id)
                if held is None:
                    self._parts[memory_id] = set(doc_ids)
                else:
                    held.update(doc_ids)
        return self._parts

    def shard(self, key: ShardKey) -> Shard:
        shard = self.shards.get(key)
        if shard is None:
            stats = self.stats.get(key[0])
            if stats is None:
                stats = self.stats[key[0]] = Bm25Stats()
            shard = self.shards[key] = Shard(ExactVectors(self.dim), stats)
        return shard
