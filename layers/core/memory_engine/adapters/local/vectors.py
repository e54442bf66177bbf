"""The dense half of one shard of the local index: exact below a size threshold, HNSW above it.

`ExactVectors` keeps a thread's vectors in one contiguous float32 matrix and scores them all (a
few milliseconds up to tens of thousands of rows). `GraphVectors` keeps them in a usearch HNSW
graph (Unum's maintained single-header library, wheels for every platform) stored in half
precision, whose search cost grows with log n instead of n. Both answer the same four questions:
put, remove, the k best by cosine, and one document's cosine. numpy and usearch are imported
inside methods.
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
    max(ef_search, ef_factor * k), so the 60 turn candidates look at 450 nodes and the 30 memory
    candidates at 225. What recall@10 needs is a beam, whatever k: at 100k memories
    (`bench.speed.graph_beam`, all 1,155 LoCoMo dev questions, against the exact scan) the turn
    graph gave 0.966 at 300, 0.981 at 400, 0.985 at 450; the memory graph 0.979 at 200, 0.984 at
    225: the narrowest beams that stay at or above 0.98 by more than the sampling noise (~0.002).
    The beam is a query-time setting: graphs on disk keep working.
    """

    __slots__ = ("ef_construction", "ef_factor", "ef_search", "m")

    def __init__(self, m: int = 16, ef_construction: int = 64, ef_search: int = 225, ef_factor: float = 7.5):
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
    """An HNSW graph (usearch, half precision) over integer keys handed out 0, 1, 2... (`id_of`
    is a list by key).

    Removal removes the key from usearch (its node stays a tombstone the graph routes through,
    and a later insert reuses the slot); a removed id that comes back gets its old key again, and
    a replaced one is removed and inserted again (usearch refuses a key it holds). Stored vectors
    are float16: what `vector` and `cosines` read back is the f16-rounded vector as float32 (a
    cosine off by ~1e-4 from the float32 one; the order of candidates is what the graph is for).
    """

    def __init__(self, dim: int, params: GraphParams, graph: Any = None, ids: list[str] | None = None):
        import threading

        self.dim = dim
        self.params = params
        self.graph = graph if graph is not None else _new_graph(dim, params)
        self.id_of: list[str] = ids if ids is not None else []
        self.label_of: dict[str, int] = dict(zip(self.id_of, range(len(self.id_of)), strict=True))
        self.deleted: set[int] = set()
        # usearch's search beam is an attribute of the index, not an argument of `search`, and
        # searches of one graph run side by side under the index's read lock: setting it and
        # searching under this lock keeps each caller's beam its own. It serialises nothing that
        # could overlap: a single query holds the GIL throughout (measured: two threads are no
        # faster than one).
        self._beam_lock = threading.Lock()

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
        import numpy as np

        labels: list[int] = []
        replaced: list[int] = []
        fresh: list[str] = []
        for doc_id in doc_ids:
            label = self.label_of.get(doc_id)
            if label is None:
                label = len(self.id_of) + len(fresh)
                fresh.append(doc_id)
            elif label in self.deleted:  # removed from usearch already: its key is free
                self.deleted.discard(label)
            else:
                replaced.append(label)
            labels.append(label)
        if replaced:
            self.graph.remove(np.asarray(replaced, dtype=np.uint64), threads=1)
        # usearch: 0 threads means every core (our -1).
        self.graph.add(np.asarray(labels, dtype=np.uint64), rows, threads=max(threads, 0))
        for doc_id in fresh:
            self.label_of[doc_id] = len(self.id_of)
            self.id_of.append(doc_id)

    def remove(self, doc_id: str) -> None:
        label = self.label_of[doc_id]
        if label not in self.deleted:
            self.graph.remove(label)
            self.deleted.add(label)

    def top(self, query: Matrix, k: int) -> list[tuple[float, str]]:
        k = min(k, len(self))
        if k == 0:
            return []
        with self._beam_lock:
            self.graph.expansion_search = self.params.beam(k)
            # threads=1: usearch's default (every core) costs twice as much for a single query.
            found = self.graph.search(query, k, threads=1)
        if len(found.keys) < k:  # too few live nodes reachable past the tombstones (mass removes)
            return self._scan(query, k)
        # Inner-product metric: distance = 1 - dot, and the vectors are unit length.
        id_of = self.id_of
        return [
            (1.0 - d, id_of[label])
            for label, d in zip(found.keys.tolist(), found.distances.tolist(), strict=True)
        ]

    def _scan(self, query: Matrix, k: int) -> list[tuple[float, str]]:
        import numpy as np

        ids = list(self.live_ids)
        scores = self.rows(ids) @ query
        best = np.argpartition(-scores, k - 1)[:k] if len(scores) > k else np.arange(len(scores))
        return [(float(scores[row]), ids[row]) for row in best]

    def rows(self, doc_ids: list[str]) -> Matrix:
        """The documents' stored vectors as float32 rows (f16-rounded)."""
        import numpy as np

        if not doc_ids:
            return np.zeros((0, self.dim), dtype=np.float32)
        label_of = self.label_of
        labels = np.asarray([label_of[doc_id] for doc_id in doc_ids], dtype=np.uint64)
        return np.vstack(self.graph.get(labels, dtype="f32"))

    def vector(self, doc_id: str) -> Matrix:
        return self.rows([doc_id])[0]

    def cosines(self, doc_ids: list[str], query: Matrix) -> list[float]:
        if not doc_ids:
            return []
        return (self.rows(doc_ids) @ query).tolist()

    # -- persistence: usearch's own file for the graph, a numpy file of ids by key --------------

    def save(self, prefix: Path) -> list[Path]:
        """The graph and its ids (a removed document's id is saved as "")."""
        import numpy as np

        files = [prefix.with_name(prefix.name + ".usearch"), prefix.with_name(prefix.name + ".ids.npy")]
        self.graph.save(str(files[0]))
        ids = ["" if label in self.deleted else doc_id for label, doc_id in enumerate(self.id_of)]
        np.save(files[1], np.asarray(ids, dtype=str))
        return files

    @classmethod
    def load(cls, dim: int, params: GraphParams, prefix: Path) -> GraphVectors:
        """A graph `save` wrote, read into memory: 0.6 s for the 100k-memory fixture's two graphs
        (900k nodes) against 0.1 s for usearch's memory-mapped `view`, which cannot take writes
        (an insert into one crashes the process). A removed document's key stays free, not
        reused for another id."""
        import numpy as np

        graph = _new_graph(dim, params)
        graph.load(str(prefix.with_name(prefix.name + ".usearch")))
        # The file keeps the graph's shape (M) but not the insert beam: set it again.
        graph.expansion_add = params.ef_construction
        ids = np.load(prefix.with_name(prefix.name + ".ids.npy")).tolist()
        live = sum(1 for doc_id in ids if doc_id)
        if len(graph) != live or graph.ndim != dim:
            raise ValueError(f"{prefix}: the graph holds {len(graph)} nodes for {live} ids")
        vectors = cls(dim, params, graph, ids)
        vectors.deleted = {label for label, doc_id in enumerate(ids) if not doc_id}
        vectors.label_of.pop("", None)
        return vectors


def _new_graph(dim: int, params: GraphParams) -> Any:
    from usearch.index import Index

    return Index(
        ndim=dim, metric="ip", dtype="f16", connectivity=params.m, expansion_add=params.ef_construction
    )
