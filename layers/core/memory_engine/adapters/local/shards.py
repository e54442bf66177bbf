"""The dense half of one thread's documents of one kind: its vectors and its turns' window vectors.

A shard's vectors are exact (a numpy matrix) below the index's threshold and an HNSW graph above
it (`vectors`); window vectors are exact float16 rows, never searched, only read for the
candidates. On disk a shard is plain numpy files, loaded memory-mapped (and usearch's graph
file). numpy is imported only for type checking: importing this module costs nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memory_engine.adapters.local.vectors import ExactVectors, GraphParams, GraphVectors, Vectors
from memory_engine.ports import DocKind

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]

__all__ = ["Shard", "ShardKey"]

# (tenant, kind, thread)
ShardKey = tuple[str, DocKind, str]


class Shard:
    """One thread's documents of one kind: vectors, and window vectors for turns that have one."""

    __slots__ = ("vectors", "windows")

    def __init__(self, vectors: Vectors, windows: ExactVectors | None = None) -> None:
        self.vectors = vectors
        # float16, exact: half the memory of float32, a cosine off by ~1e-5 (docs/performance.md).
        # None until a document brings one.
        self.windows = windows

    def __len__(self) -> int:
        return len(self.vectors)

    def window_cosines(self, doc_ids: list[str], query: Matrix) -> list[float | None]:
        """The query's cosine to each document's window vector; None for one without."""
        windows = self.windows
        if windows is None:
            return [None] * len(doc_ids)
        held = [doc_id for doc_id in doc_ids if doc_id in windows.row_of]
        found = dict(zip(held, windows.cosines(held, query), strict=True)) if held else {}
        return [found.get(doc_id) for doc_id in doc_ids]

    def save(self, prefix: Path) -> list[Path]:
        """The shard's files, named from `prefix` (usearch's graph, or numpy files of rows)."""
        files = self.vectors.save(prefix)
        if self.windows is not None and len(self.windows):
            files += self.windows.save(prefix.with_name(prefix.name + ".windows"))
        return files

    @classmethod
    def load(cls, prefix: Path, dim: int, graph: GraphParams | None, windows: bool) -> Shard:
        """The shard `save` wrote: exact rows when `graph` is None, else an HNSW graph."""
        vectors = GraphVectors.load(dim, graph, prefix) if graph is not None else ExactVectors.load(prefix)
        window = ExactVectors.load(prefix.with_name(prefix.name + ".windows")) if windows else None
        return cls(vectors, window)
