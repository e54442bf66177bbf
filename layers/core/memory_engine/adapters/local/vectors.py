"""The dense half of one shard of the local index: exact below a size threshold, HNSW above it.

`ExactVectors` keeps a thread's vectors in one contiguous float32 matrix and scores them all (a
few milliseconds up to tens of thousands of rows). `GraphVectors` keeps them in a voyager HNSW
graph (Spotify's maintained build of hnswlib's algorithm, wheels for every platform), whose search
cost grows with log n instead of n. Both answer the same four questions: put, remove, the k best
by cosine, and one document's cosine. numpy and voyager are imported inside methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]

__all__ = ["ExactVectors", "GraphParams", "GraphVectors", "Vectors"]

_MIN_ROWS = 16
# Below this many matrix cells a single-threaded einsum beats BLAS: OpenBLAS splits even a
# 10k x 384 product over both cores, and when the server, the worker or the embedding model keep
# those cores busy, the hand-off alone can cost 10 ms (measured: 0.6 ms einsum vs 0.3-12 ms BLAS).
_BLAS_MIN_CELLS = 1 << 24


class GraphParams:
    """HNSW settings: M links per node, ef_construction at insert, and the search beam as
    max(ef_search, ef_factor * k), so the 100 turn candidates look at 500 nodes and the 50
    memory candidates at 250: chosen by `bench.speed.retrieve_latency`'s recall against the exact
    scan (docs/research/speed.md). The beam is a query-time setting: graphs on disk keep working.
    """

    __slots__ = ("ef_construction", "ef_factor", "ef_search", "m")

    def __init__(self, m: int = 16, ef_construction: int = 64, ef_search: int = 250, ef_factor: float = 5.0):
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.ef_factor = ef_factor

    def beam(self, k: int) -> int:
        return max(self.ef_search, int(self.ef_factor * k), k)


class Vectors(Protocol):
    """What a shard needs from its dense store."""

    def __len__(self) -> int: ...

    def __contains__(self, doc_id: object) -> bool: ...

    def save(self, prefix: Path) -> list[Path]:
        """Write the vectors to files named from `prefix`; returns their paths."""
        ...

    def put(self, doc_ids: list[str], rows: Matrix, threads: int = 1) -> None:
        """Add or replace rows; `threads` > 1 (or -1: every core) for graph inserts in bulk."""
        ...

    def remove(self, doc_id: str) -> None: ...

    def top(self, query: Matrix, k: int) -> list[tuple[float, str]]:
        """The k best (cosine, doc id), in no particular order."""
        ...

    def vector(self, doc_id: str) -> Matrix: ...

    def cosines(self, doc_ids: list[str], query: Matrix) -> list[float]: ...


class ExactVectors:
    """Rows 0..n-1 of a growable matrix, kept dense by swap-removal; scored by brute force."""

    __slots__ = ("ids", "matrix", "row_of")

    def __init__(self, dim: int, dtype: str = "float32") -> None:
        import numpy as np

        # float16 for vectors only rescored, never searched (a shard's window vectors): half the
        # memory, and a cosine off by ~1e-5 (measured on e5 windows; int8 with a scale per row
        # was off by ~3e-4, as much as separates adjacent candidates: docs/performance.md).
        self.matrix: Matrix = np.zeros((_MIN_ROWS, dim), dtype=dtype)
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.row_of

    def put(self, doc_ids: list[str], rows: Matrix, threads: int = 1) -> None:
        import numpy as np

        for doc_id, vector in zip(doc_ids, rows, strict=True):
            row = self.row_of.get(doc_id)
            if row is None:
                row = len(self.ids)
                if row == self.matrix.shape[0]:
                    grown = np.zeros((row * 2, self.matrix.shape[1]), dtype=self.matrix.dtype)
                    grown[:row] = self.matrix
                    self.matrix = grown
                self.ids.append(doc_id)
                self.row_of[doc_id] = row
            self.matrix[row] = vector

    def remove(self, doc_id: str) -> None:
        row = self.row_of.pop(doc_id)
        last = len(self.ids) - 1
        if row != last:
            # Move the last row into the hole so the live rows stay one contiguous slice.
            moved = self.ids[last]
            self.matrix[row] = self.matrix[last]
            self.ids[row] = moved
            self.row_of[moved] = row
        self.ids.pop()
        capacity = self.matrix.shape[0]
        if capacity > _MIN_ROWS and len(self.ids) < capacity // 4:
            self.matrix = self.matrix[: capacity // 2].copy()  # give memory back after mass deletes

    def live(self) -> Matrix:
        return self.matrix[: len(self.ids)]

    def save(self, prefix: Path) -> list[Path]:
        """The ids and the live rows as two numpy files (`load` maps them back)."""
        import numpy as np

        files = [prefix.with_name(prefix.name + ".ids.npy"), prefix.with_name(prefix.name + ".rows.npy")]
        np.save(files[0], np.asarray(self.ids, dtype=str))
        np.save(files[1], self.live())
        return files

    @classmethod
    def load(cls, prefix: Path) -> ExactVectors:
        """Vectors over the rows `save` wrote, memory-mapped copy-on-write: pages load as they are
        read, and the first row added copies the matrix into memory."""
        import numpy as np

        ids = np.load(prefix.with_name(prefix.name + ".ids.npy")).tolist()
        matrix = np.load(prefix.with_name(prefix.name + ".rows.npy"), mmap_mode="c")
        if matrix.ndim != 2 or len(matrix) != len(ids):
            raise ValueError(f"{prefix}: {len(ids)} ids for {matrix.shape} rows")
        vectors = cls.__new__(cls)
        if not ids:  # put grows a matrix by doubling its rows: start from a few
            matrix = np.zeros((_MIN_ROWS, matrix.shape[1]), dtype=matrix.dtype)
        vectors.matrix, vectors.ids = matrix, ids
        vectors.row_of = dict(zip(ids, range(len(ids)), strict=True))
        return vectors

    def top(self, query: Matrix, k: int) -> list[tuple[float, str]]:
        import numpy as np

        rows = self.live()
        scores = np.einsum("ij,j->i", rows, query) if rows.size < _BLAS_MIN_CELLS else rows @ query
        best = np.argpartition(-scores, k - 1)[:k] if len(scores) > k else np.arange(len(scores))
        return [(float(scores[row]), self.ids[row]) for row in best]

    def vector(self, doc_id: str) -> Matrix:
        return self.matrix[self.row_of[doc_id]]

    def cosines(self, doc_ids: list[str], query: Matrix) -> list[float]:
        rows = self.matrix[[self.row_of[doc_id] for doc_id in doc_ids]]
        return [float(x) for x in rows.astype(query.dtype, copy=False) @ query]


class GraphVectors:
    """An HNSW graph over integer labels handed out 0, 1, 2... (`id_of` is a list by label).

    Removal marks the node deleted (the graph keeps routing through it); a removed id that comes
    back in the same process is un-marked and updated in place.
    """

    def __init__(self, dim: int, params: GraphParams, graph: Any = None, ids: list[str] | None = None):
        self.dim = dim
        self.params = params
        self.graph = graph if graph is not None else _new_graph(dim, params)
        self.id_of: list[str] = ids if ids is not None else []
        self.label_of: dict[str, int] = dict(zip(self.id_of, range(len(self.id_of)), strict=True))
        self.deleted: set[int] = set()

    def __len__(self) -> int:
        return len(self.id_of) - len(self.deleted)

    def __contains__(self, doc_id: object) -> bool:
        label = self.label_of.get(doc_id)  # type: ignore[call-overload]
        return label is not None and label not in self.deleted

    @property
    def live_ids(self) -> set[str]:
        return {doc_id for doc_id, label in self.label_of.items() if label not in self.deleted}

    @classmethod
    def build(cls, dim: int, params: GraphParams, doc_ids: list[str], rows: Matrix) -> GraphVectors:
        graph = cls(dim, params)
        graph.put(doc_ids, rows, threads=-1)
        return graph

    def put(self, doc_ids: list[str], rows: Matrix, threads: int = 1) -> None:
        fresh_ids: list[str] = []
        fresh_rows: list[int] = []
        for position, doc_id in enumerate(doc_ids):
            label = self.label_of.get(doc_id)
            if label is None:
                fresh_ids.append(doc_id)
                fresh_rows.append(position)
                continue
            if label in self.deleted:
                self.graph.unmark_deleted(label)
                self.deleted.discard(label)
            self.graph.add_item(rows[position], label)  # an existing label is updated in place
        if fresh_ids:
            start = len(self.id_of)
            labels = list(range(start, start + len(fresh_ids)))
            self.graph.add_items(rows[fresh_rows], labels, num_threads=threads)
            for doc_id, label in zip(fresh_ids, labels, strict=True):
                self.label_of[doc_id] = label
                self.id_of.append(doc_id)

    def remove(self, doc_id: str) -> None:
        label = self.label_of[doc_id]
        if label not in self.deleted:
            self.graph.mark_deleted(label)
            self.deleted.add(label)

    def top(self, query: Matrix, k: int) -> list[tuple[float, str]]:
        k = min(k, len(self))
        if k == 0:
            return []
        try:
            labels, distances = self.graph.query(query, k=k, query_ef=self.params.beam(k))
        except RuntimeError:  # voyager's RecallError: too few live nodes reachable (mass deletes)
            return self._scan(query, k)
        # Inner-product space: distance = 1 - dot, and the vectors are unit length.
        id_of = self.id_of
        return [(1.0 - d, id_of[label]) for label, d in zip(labels.tolist(), distances.tolist(), strict=True)]

    def _scan(self, query: Matrix, k: int) -> list[tuple[float, str]]:
        import numpy as np

        ids = [doc_id for doc_id, label in self.label_of.items() if label not in self.deleted]
        rows = np.asarray(self.graph.get_vectors([self.label_of[doc_id] for doc_id in ids]), dtype=np.float32)
        scores = rows @ query
        best = np.argpartition(-scores, k - 1)[:k] if len(scores) > k else np.arange(len(scores))
        return [(float(scores[row]), ids[row]) for row in best]

    def vector(self, doc_id: str) -> Matrix:
        import numpy as np

        return np.asarray(self.graph.get_vector(self.label_of[doc_id]), dtype=np.float32)

    def cosines(self, doc_ids: list[str], query: Matrix) -> list[float]:
        import numpy as np

        if not doc_ids:
            return []
        label_of = self.label_of
        rows = np.asarray(self.graph.get_vectors([label_of[doc_id] for doc_id in doc_ids]), dtype=np.float32)
        return (rows @ query).tolist()

    # -- persistence: voyager's own file for the graph, a numpy file of ids by label ------------

    def save(self, prefix: Path) -> list[Path]:
        """The graph and its ids (a removed document's id is saved as "")."""
        import numpy as np

        files = [prefix.with_name(prefix.name + ".hnsw"), prefix.with_name(prefix.name + ".ids.npy")]
        self.graph.save(str(files[0]))
        ids = ["" if label in self.deleted else doc_id for label, doc_id in enumerate(self.id_of)]
        np.save(files[1], np.asarray(ids, dtype=str))
        return files

    @classmethod
    def load(cls, dim: int, params: GraphParams, prefix: Path) -> GraphVectors:
        """A graph `save` wrote (its removed nodes stay marked deleted in voyager's file; their
        labels are not reused)."""
        import numpy as np
        from voyager import Index

        graph = Index.load(str(prefix.with_name(prefix.name + ".hnsw")))
        ids = np.load(prefix.with_name(prefix.name + ".ids.npy")).tolist()
        if len(ids) != graph.num_elements or graph.num_dimensions != dim:
            raise ValueError(f"{prefix}: the graph holds {graph.num_elements} nodes for {len(ids)} ids")
        vectors = cls(dim, params, graph, ids)
        vectors.deleted = {label for label, doc_id in enumerate(ids) if not doc_id}
        vectors.label_of.pop("", None)
        return vectors


def _new_graph(dim: int, params: GraphParams) -> Any:
    from voyager import Index, Space

    return Index(Space.InnerProduct, num_dimensions=dim, M=params.m, ef_construction=params.ef_construction)
