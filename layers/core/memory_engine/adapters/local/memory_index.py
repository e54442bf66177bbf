"""In-process hybrid search index: BM25 on tantivy beside dense vectors per (tenant, kind, thread).

Local stand-in for OpenSearch (k-NN + BM25). The lexical half is one tantivy index per document
kind (`lexical`), filtered to a tenant's threads by term. The dense half has one shard per memory
thread and kind, holding that thread's vectors only, so a search confined to a few threads touches
those threads and nothing else: a small thread is never crowded out by big ones (no
post-filtering of a shared graph), and its cost does not grow with the tenant. A shard scores its
vectors exactly until it holds `ann_threshold` documents, then moves them into an HNSW graph
(`vectors.GraphVectors`). What a hit echoes (memory, date, text) is read from tantivy's stored
documents, not kept in Python.

Thread safety: the index's one lock (`locked.ReadWriteLock`) around every call, so the server's
threads, the worker and a checkpoint may share an instance: searches side by side, a write alone.
numpy, usearch and tantivy are imported inside methods: importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_engine.adapters.local.lexical import LexicalIndex, Stored, details
from memory_engine.adapters.local.locked import ReadWriteLock
from memory_engine.adapters.local.shards import Shard, ShardKey
from memory_engine.adapters.local.vectors import ExactVectors, GraphParams, GraphVectors
from memory_engine.errors import InvalidInput
from memory_engine.ports import DocKind, IndexDocument, IndexHit, Period, SearchIndex
from memory_engine.retrieval import candidates
from memory_engine.retrieval.text import tokenize

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]

__all__ = ["DEFAULT_ANN_THRESHOLD", "LocalSearchIndex"]

# Past this many documents a shard searches an HNSW graph instead of scanning: below it an exact
# scan costs a few milliseconds and keeps writes free of graph inserts (docs/performance.md).
DEFAULT_ANN_THRESHOLD = 20_000
# An event-time range holding at most this many documents of the threads has each of them scored
# exactly (their ids read from tantivy); a wider one filters the nearest documents, asked for in
# growing numbers until k are inside it (`_dense_within`).
READ_AT_MOST = 4_096


class LocalSearchIndex(SearchIndex):
    """SearchIndex held in this process, safe to share between server threads and the worker.

    `ann_threshold` None keeps every shard exact (the reference the benchmarks compare against).
    The lexical half lives in memory, or in `directory` (the persisted index, `index_files`).
    """

    def __init__(
        self,
        ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
        graph: GraphParams | None = None,
        directory: Path | None = None,
    ) -> None:
        self.lock = ReadWriteLock()
        self.ann_threshold = ann_threshold
        self.graph = graph or GraphParams()
        self.lexical = LexicalIndex(directory)
        self.shards: dict[ShardKey, Shard] = {}
        self.dims: dict[str, int] = {}  # per tenant: the dimension of its vectors
        self.dirty: set[ShardKey] = set()  # shards written since the last checkpoint
        # Threads for graph inserts: one on the request path (the cores are shared), all in bulk.
        self.insert_threads = 1

    def __len__(self) -> int:
        with self.lock.reading():
            return sum(len(shard) for shard in self.shards.values())

    # -- writes -----------------------------------------------------------------------------------

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        """Add documents, replacing any with the same (tenant, doc_id); vectors are re-normalised."""
        if not docs:
            return
        import numpy as np

        with self.lock.writing():
            dims = self._checked_dims(docs)
            last = {(doc.tenant, doc.doc_id): doc for doc in docs}  # given twice: the last wins
            docs = list(last.values())
            by_tenant: dict[str, list[str]] = {}
            for tenant, doc_id in last:
                by_tenant.setdefault(tenant, []).append(doc_id)
            moved: list[tuple[DocKind, str, str]] = []
            for tenant, doc_ids in by_tenant.items():  # a document moved to another thread or kind
                for doc_id, (kind, stored) in self.lexical.lookup(tenant, doc_ids).items():
                    doc = last[tenant, doc_id]
                    if (kind, stored.thread) != (doc.kind, doc.thread):
                        self._drop_vectors((tenant, kind, stored.thread), [doc_id])
                        moved.append((kind, tenant, doc_id))
            self.lexical.write(docs, deleted=moved)
            self.dims.update(dims)
            batches: dict[ShardKey, list[IndexDocument]] = {}
            for doc in docs:  # one multi-row insert per shard (a graph's inserts run in threads)
                batches.setdefault((doc.tenant, doc.kind, doc.thread), []).append(doc)
            for key, batch in batches.items():
                shard = self.shards.get(key)
                if shard is None:
                    shard = self.shards[key] = Shard(ExactVectors(dims[key[0]]))
                rows = _unit_rows(np.asarray([doc.vector for doc in batch], dtype=np.float32))
                shard.vectors.put([doc.doc_id for doc in batch], rows, self.insert_threads)
                self._put_windows(shard, batch)
                self._maybe_grow(shard)
                self.dirty.add(key)

    def _checked_dims(self, docs: Sequence[IndexDocument]) -> dict[str, int]:
        """Each tenant's vector dimension, checked for the whole batch before anything is written."""
        dims: dict[str, int] = {}
        for doc in docs:
            dim = dims.setdefault(doc.tenant, self.dims.get(doc.tenant, len(doc.vector)))
            for vector in (doc.vector, doc.window_vector or doc.vector):
                if len(vector) != dim:
                    raise InvalidInput(
                        f"document {doc.doc_id!r} has a {len(vector)}-dimensional vector but the "
                        f"index of tenant {doc.tenant!r} holds {dim}-dimensional ones; re-embed it "
                        "with the same model, or clear and rebuild the index after changing models"
                    )
        return dims

    def _put_windows(self, shard: Shard, docs: list[IndexDocument]) -> None:
        import numpy as np

        fresh = [doc for doc in docs if doc.window_vector]
        for doc in docs:  # a document written again without one (or an empty one) loses the one it had
            if not doc.window_vector and shard.windows is not None and doc.doc_id in shard.windows.row_of:
                shard.windows.remove(doc.doc_id)
        if fresh:
            if shard.windows is None:
                shard.windows = ExactVectors(len(docs[0].vector), dtype="float16")
            rows = _unit_rows(np.asarray([doc.window_vector for doc in fresh], dtype=np.float32))
            shard.windows.put([doc.doc_id for doc in fresh], rows)

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        """Remove documents and the turn documents of those memories; ids the index does not hold
        are ignored, so deletes can be replayed."""
        if not doc_ids:
            return
        with self.lock.writing():
            if tenant not in self.dims:
                return
            found = [(kind, stored) for kind, stored in self.lexical.lookup(tenant, doc_ids).values()]
            found += self.lexical.parts(tenant, doc_ids)
            self.lexical.write(deleted=[(kind, tenant, stored.doc_id) for kind, stored in found])
            by_shard: dict[ShardKey, list[str]] = {}
            for kind, stored in found:
                by_shard.setdefault((tenant, kind, stored.thread), []).append(stored.doc_id)
            for key, ids in by_shard.items():
                self._drop_vectors(key, ids)
            if not any(key[0] == tenant for key in self.shards):
                del self.dims[tenant]  # an emptied tenant may come back with another model

    def _drop_vectors(self, key: ShardKey, doc_ids: list[str]) -> None:
        shard = self.shards.get(key)
        if shard is None:
            return
        for doc_id in dict.fromkeys(doc_ids):
            if doc_id in shard.vectors:
                shard.vectors.remove(doc_id)
            if shard.windows is not None and doc_id in shard.windows.row_of:
                shard.windows.remove(doc_id)
        if not len(shard):
            del self.shards[key]
        self.dirty.add(key)

    def clear(self, tenant: str | None = None) -> None:
        with self.lock.writing():
            self.lexical.clear(tenant)
            gone = [key for key in self.shards if tenant is None or key[0] == tenant]
            for key in gone:
                del self.shards[key]
            self.dirty.update(gone)
            for name in [name for name in self.dims if tenant is None or name == tenant]:
                del self.dims[name]

    def _maybe_grow(self, shard: Shard) -> None:
        """Move a shard that crossed the threshold from exact scanning into an HNSW graph."""
        vectors = shard.vectors
        if (
            self.ann_threshold is None
            or not isinstance(vectors, ExactVectors)
            or len(vectors) < self.ann_threshold
        ):
            return
        shard.vectors = GraphVectors.build(
            vectors.matrix.shape[1], self.graph, list(vectors.ids), vectors.live()
        )

    # -- reads ------------------------------------------------------------------------------------

    def get(self, tenant: str, doc_id: str) -> IndexDocument | None:
        """The stored document with its (unit-normalised, float32-rounded) vector, or None."""
        with self.lock.reading():
            found = self.lexical.lookup(tenant, [doc_id]).get(doc_id)
            if found is None:
                return None
            kind, stored = found
            shard, more = self.shards[tenant, kind, stored.thread], details(stored)
            windows, window = shard.windows, None
            if windows is not None and doc_id in windows.row_of:
                window = windows.vector(doc_id).astype("float32").tolist()
            return IndexDocument(
                tenant=tenant, doc_id=doc_id, session_uuid=more.session_uuid, thread=stored.thread,
                text=more.text, vector=shard.vectors.vector(doc_id).tolist(),
                source_dialog_uuids=more.source_dialog_uuids, created_at=more.created_at, kind=kind,
                memory_id=stored.memory_id, occurred_at=stored.occurred_at, window_vector=window,
            )  # fmt: skip

    def memory_ids(self) -> dict[str, set[str]]:
        """Per tenant, the ids of the memory documents held (what the store should hold too)."""
        with self.lock.reading():
            held: dict[str, set[str]] = {}
            for (tenant, kind, _), shard in self.shards.items():
                if kind == "memory":
                    held.setdefault(tenant, set()).update(_ids(shard))
            return held

    def search_kinds(
        self,
        tenant: str,
        threads: Sequence[str],
        text: str,
        vector: Sequence[float],
        k: Mapping[DocKind, int],
        said: Period | None = None,
        terms: Sequence[str] | None = None,
    ) -> dict[DocKind, list[IndexHit]]:
        """Each kind's shards of the threads searched under one hold of the lock.

        A document found by one retriever gets the other's score computed too: its BM25 from
        tantivy, or its cosine from the shard's vectors. `said` filters both retrievers: the k
        best of each are the k best said within it.
        """
        found: dict[DocKind, list[IndexHit]] = {kind: [] for kind in k}
        if not any(n > 0 for n in k.values()):
            return found
        import numpy as np

        with self.lock.reading():
            dim = self.dims.get(tenant)
            if dim is None:
                return found
            query: Matrix | None = None
            if len(vector):
                if len(vector) != dim:
                    raise InvalidInput(
                        f"the query vector has {len(vector)} dimensions but tenant {tenant!r} is indexed "
                        f"with {dim}; embed the query with the model that embedded the memories"
                    )
                query = _unit_rows(np.asarray([vector], dtype=np.float32))[0]
            words = list(terms) if terms is not None else tokenize(text)
            unique = list(dict.fromkeys(threads))
            for kind, n in k.items():
                shards = {t: self.shards[tenant, kind, t] for t in unique if (tenant, kind, t) in self.shards}
                if n > 0 and shards:
                    found[kind] = self._search(kind, tenant, shards, query, words, n, said)
            return found

    def _search(
        self,
        kind: DocKind,
        tenant: str,
        shards: dict[str, Shard],
        query: Matrix | None,
        terms: list[str],
        k: int,
        said: Period | None = None,
    ) -> list[IndexHit]:
        """Up to k dense and k lexical candidates over the threads' shards of one kind, with both
        scores and what each hit echoes."""
        dense: dict[str, float] = {}
        if query is not None and said is not None:
            dense = self._dense_within(kind, tenant, shards, query, k, said)
        elif query is not None:
            best = [
                (score, doc_id) for shard in shards.values() for score, doc_id in shard.vectors.top(query, k)
            ]
            best.sort(key=_best_first)
            dense = {doc_id: score for score, doc_id in best[:k]}

        # The k best by BM25, and the BM25 of the dense hits (0 for those sharing no word), with
        # what each hit echoes, in one pass over tantivy's store. Threads holding every document
        # of the kind (one tenant, one thread: the worst case for a filter) need no filter.
        whole = sum(len(shard) for shard in shards.values()) == self.lexical.count(kind)
        lexical, lexical_of, stored = self.lexical.search(
            kind, tenant, list(shards), terms, k, list(dense), whole, said
        )
        dense_of: dict[str, float] = {}
        window_of: dict[str, float | None] = {}
        if query is not None:  # one vector read per shard for its lexical-only hits, one for windows
            for thread, ids in _by_thread(candidates.unscored(lexical, dense), stored).items():
                dense_of.update(zip(ids, shards[thread].vectors.cosines(ids, query), strict=True))
            for thread, ids in _by_thread(list(stored), stored).items():
                window_of.update(zip(ids, shards[thread].window_cosines(ids, query), strict=True))
        return [
            _hit(doc_id, dense_score, lexical_score, stored[doc_id], window_of.get(doc_id))
            for doc_id, dense_score, lexical_score in candidates.merge(dense, lexical, dense_of, lexical_of)
            if doc_id in stored  # a dense hit the lexical side no longer holds: gone mid-write
        ]

    def _dense_within(
        self, kind: DocKind, tenant: str, shards: dict[str, Shard], query: Matrix, k: int, said: Period
    ) -> dict[str, float]:
        """The k nearest documents said within `said`: each of them scored when the range holds
        few (exact whatever the shard), else the nearest asked for in fours-fold larger numbers,
        up to every document of the threads, until k of them are inside it."""
        inside = self.lexical.said_within(kind, tenant, list(shards), said, READ_AT_MOST)
        best: list[tuple[float, str]] = []
        if inside is not None:
            for thread, ids in _by_thread(list(inside), inside).items():
                if thread in shards:
                    best += zip(shards[thread].vectors.cosines(ids, query), ids, strict=True)
        else:
            total, wanted = sum(len(shard) for shard in shards.values()), 4 * k
            while True:
                near = [pair for shard in shards.values() for pair in shard.vectors.top(query, wanted)]
                said_at = self.lexical.lookup(tenant, [doc_id for _, doc_id in near])
                best = [(score, doc_id) for score, doc_id in near if _said_in(said_at.get(doc_id), said)]
                if len(best) >= k or wanted >= total:
                    break
                wanted *= 4
        best.sort(key=_best_first)
        return {doc_id: score for score, doc_id in best[:k]}


def _said_in(found: tuple[DocKind, Stored] | None, said: Period) -> bool:
    return found is not None and said.holds(found[1].occurred_at)


def _ids(shard: Shard) -> list[str]:
    vectors = shard.vectors
    return list(vectors.live_ids) if isinstance(vectors, GraphVectors) else list(vectors.ids)  # type: ignore[attr-defined]


def _by_thread(doc_ids: list[str], stored: Mapping[str, Stored]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for doc_id in doc_ids:
        if doc_id in stored:
            grouped.setdefault(stored[doc_id].thread, []).append(doc_id)
    return grouped


def _unit_rows(rows: Any) -> Any:
    """Rows scaled to unit length, so a dot product is the cosine; zero rows stay zero."""
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0).astype(np.float32)


def _best_first(item: tuple[float, str]) -> tuple[float, str]:
    return -item[0], item[1]


def _hit(doc_id: str, dense: float, lexical: float, row: Stored, window: float | None) -> IndexHit:
    # Positional: a frozen dataclass built by keyword costs twice as much, ~500 times a retrieve.
    # A turn document (it points at its memory) brings its text back: the hit's evidence.
    return IndexHit(doc_id, dense, lexical, row.memory_id, row.occurred_at, row.text, window)
