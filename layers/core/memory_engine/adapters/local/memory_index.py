"""In-process hybrid search index: dense cosine plus BM25, one shard per (tenant, kind, thread).

Local stand-in for OpenSearch (k-NN + BM25). Every memory thread of a tenant has one shard per
document kind, holding that thread's vectors and postings only, so a search confined to a few
threads touches those threads and nothing else: a small thread is never crowded out by big ones
(no post-filtering of a shared graph), and its cost does not grow with the tenant. A shard scores
its vectors exactly until it holds `ann_threshold` documents, then moves them into an HNSW graph
(`vectors.GraphVectors`); BM25 statistics are shared by the shards of a kind (`Bm25Stats`).

Thread safety: one re-entrant lock around every call, so the server's threads, the worker and a
checkpoint may share an instance; readers serialise (a search is a few milliseconds). numpy and
voyager are imported inside methods: importing this module costs nothing.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memory_engine.adapters.local.shards import Meta, Shard, ShardKey, TenantState
from memory_engine.adapters.local.vectors import ExactVectors, GraphParams, GraphVectors
from memory_engine.errors import InvalidInput
from memory_engine.ports import DocKind, IndexDocument, IndexHit, SearchIndex
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


class LocalSearchIndex(SearchIndex):
    """SearchIndex held in memory, safe to share between server threads and the worker.

    `ann_threshold` None keeps every shard exact (the reference the benchmarks compare against);
    `on_change` is told the key of every shard a write touched (the persisted index's dirty set).
    """

    def __init__(
        self, ann_threshold: int | None = DEFAULT_ANN_THRESHOLD, graph: GraphParams | None = None
    ) -> None:
        self.lock = threading.RLock()
        self.ann_threshold = ann_threshold
        self.graph = graph or GraphParams()
        self.tenants: dict[str, TenantState] = {}
        self.dirty: set[tuple[str, ShardKey]] = set()
        # Threads for graph inserts: one on the request path (the cores are shared), all in bulk.
        self.insert_threads = 1

    def __len__(self) -> int:
        with self.lock:
            return sum(len(t.where) for t in self.tenants.values())

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        """Add documents, replacing any with the same (tenant, doc_id); vectors are re-normalised."""
        if not docs:
            return
        import numpy as np

        with self.lock:
            dims: dict[str, int] = {}
            for doc in docs:
                known = self.tenants[doc.tenant].dim if doc.tenant in self.tenants else None
                dim = dims.setdefault(doc.tenant, known if known is not None else len(doc.vector))
                for vector in (doc.vector, doc.window_vector or doc.vector):
                    if len(vector) != dim:
                        # Checked for the whole batch first, so a bad document writes nothing.
                        raise InvalidInput(
                            f"document {doc.doc_id!r} has a {len(vector)}-dimensional vector but the "
                            f"index of tenant {doc.tenant!r} holds {dim}-dimensional ones; re-embed it "
                            "with the same model, or clear and rebuild the index after changing models"
                        )
            if len(set(dims.values())) == 1:
                vectors = list(_unit_rows(np.asarray([doc.vector for doc in docs], dtype=np.float32)))
            else:  # tenants embedded with different models in one batch: rows of unequal length
                vectors = [_unit_rows(np.asarray([doc.vector], dtype=np.float32))[0] for doc in docs]
            # Group the batch by shard so a graph shard gets one multi-row insert.
            batches: dict[tuple[str, ShardKey], tuple[list[str], list[Matrix]]] = {}
            windows: dict[tuple[str, ShardKey], dict[str, Sequence[float]]] = {}
            for doc, vector in zip(docs, vectors, strict=True):
                state = self.tenants.get(doc.tenant)
                if state is None:
                    state = self.tenants[doc.tenant] = TenantState(dims[doc.tenant])
                key: ShardKey = (doc.kind, sys.intern(doc.thread))
                old_key = state.where.get(doc.doc_id)
                if old_key is not None and old_key != key:
                    self._drop(doc.tenant, state, doc.doc_id)
                shard = state.shard(key)
                old = shard.row(doc.doc_id) if doc.doc_id in shard.meta else None
                shard.bm25.add(doc.doc_id, 0, tokenize(doc.text))
                shard.meta[doc.doc_id] = (
                    sys.intern(doc.session_uuid), doc.text, tuple(doc.source_dialog_uuids), doc.created_at,
                    doc.memory_id, doc.occurred_at,
                )  # fmt: skip
                state.where[doc.doc_id] = key
                if old is not None and old[4] and old[4] != doc.memory_id:
                    state.parts.get(old[4], set()).discard(doc.doc_id)
                if doc.memory_id:
                    state.parts.setdefault(doc.memory_id, set()).add(doc.doc_id)
                ids, rows = batches.setdefault((doc.tenant, key), ([], []))
                ids.append(doc.doc_id)
                rows.append(vector)
                pending = windows.setdefault((doc.tenant, key), {})
                if doc.window_vector:
                    pending[doc.doc_id] = doc.window_vector
                else:  # a document written again without one (or an empty one) loses the one it had
                    pending.pop(doc.doc_id, None)
                    if shard.windows is not None and doc.doc_id in shard.windows.row_of:
                        shard.windows.remove(doc.doc_id)
            for (tenant, key), (ids, rows) in batches.items():
                state = self.tenants[tenant]
                # A document given twice (or moved on within the batch) keeps its last vector only.
                last = {
                    doc_id: row
                    for doc_id, row in zip(ids, rows, strict=True)
                    if state.where.get(doc_id) == key
                }
                target = state.shards.get(key)
                if target is None or not last:
                    continue
                target.vectors.put(list(last), np.stack(list(last.values())), self.insert_threads)
                self._maybe_grow(target)
                self.dirty.add((tenant, key))
                fresh = {doc_id: row for doc_id, row in windows[tenant, key].items() if doc_id in last}
                if fresh:
                    if target.windows is None:
                        target.windows = ExactVectors(state.dim, dtype="float16")
                    unit = _unit_rows(np.asarray(list(fresh.values()), dtype=np.float32))
                    target.windows.put(list(fresh), unit)

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        """Remove documents and the turn documents of those memories; ids the index does not hold
        are ignored, so deletes can be replayed."""
        with self.lock:
            state = self.tenants.get(tenant)
            if state is None:
                return
            doomed = list(doc_ids)
            for doc_id in doc_ids:
                doomed.extend(state.parts.pop(doc_id, ()))
            for doc_id in doomed:
                self._drop(tenant, state, doc_id)
            if not state.where:
                del self.tenants[tenant]  # an emptied tenant may come back with another model

    def clear(self, tenant: str | None = None) -> None:
        with self.lock:
            gone = list(self.tenants) if tenant is None else [tenant]
            for name in gone:
                state = self.tenants.pop(name, None)
                if state is not None:
                    self.dirty.update((name, key) for key in state.shards)

    def get(self, tenant: str, doc_id: str) -> IndexDocument | None:
        """The stored document with its (unit-normalised, float32-rounded) vector, or None."""
        with self.lock:
            state = self.tenants.get(tenant)
            key = state.where.get(doc_id) if state else None
            if state is None or key is None:
                return None
            shard = state.shards[key]
            session_uuid, text, sources, created_at, memory_id, occurred_at = shard.row(doc_id)
            windows, window = shard.windows, None
            if windows is not None and doc_id in windows.row_of:
                window = windows.vector(doc_id).astype("float32").tolist()
            return IndexDocument(
                tenant=tenant, doc_id=doc_id, session_uuid=session_uuid, thread=key[1], text=text,
                vector=shard.vectors.vector(doc_id).tolist(), source_dialog_uuids=list(sources),
                created_at=created_at, kind=key[0], memory_id=memory_id, occurred_at=occurred_at,
                window_vector=window,
            )  # fmt: skip

    def memory_ids(self) -> dict[str, set[str]]:
        """Per tenant, the ids of the memory documents held (what the store should hold too)."""
        with self.lock:
            return {
                tenant: {doc_id for doc_id, key in state.where.items() if key[0] == "memory"}
                for tenant, state in self.tenants.items()
            }

    def shards(self) -> Iterator[tuple[str, ShardKey, Shard]]:
        """Every shard with its tenant and key (hold `lock` while iterating)."""
        for tenant, state in self.tenants.items():
            for key, shard in state.shards.items():
                yield tenant, key, shard

    def search_kinds(
        self,
        tenant: str,
        threads: Sequence[str],
        text: str,
        vector: Sequence[float],
        k: Mapping[DocKind, int],
    ) -> dict[DocKind, list[IndexHit]]:
        """Each kind's shards of the threads searched under one hold of the lock.

        A document found by one retriever gets the other's score computed too: its BM25 from the
        shard's scores, or its cosine from the shard's vectors.
        """
        found: dict[DocKind, list[IndexHit]] = {kind: [] for kind in k}
        if not any(n > 0 for n in k.values()):
            return found
        import numpy as np

        with self.lock:
            state = self.tenants.get(tenant)
            if state is None:
                return found
            query: Matrix | None = None
            if len(vector):
                if len(vector) != state.dim:
                    raise InvalidInput(
                        f"the query vector has {len(vector)} dimensions but tenant {tenant!r} is indexed "
                        f"with {state.dim}; embed the query with the model that embedded the memories"
                    )
                query = _unit_rows(np.asarray([vector], dtype=np.float32))[0]
            terms = tokenize(text)
            unique = list(dict.fromkeys(threads))
            for kind, n in k.items():
                shards = [state.shards[kind, t] for t in unique if (kind, t) in state.shards]
                if n > 0 and shards:
                    found[kind] = self._search_shards(shards, query, terms, n)
            return found

    def _search_shards(
        self, shards: list[Shard], query: Matrix | None, terms: list[str], k: int
    ) -> list[IndexHit]:
        """Up to k dense and k lexical candidates over the shards of one kind, with both scores.

        ~500 hits per retrieve at 100k memories: per hit, one dict entry per retriever and one
        row read, no per-hit objects beyond the hit itself (docs/performance.md)."""
        dense: dict[str, float] = {}
        shard_of: dict[str, Shard] = {}
        if query is not None:
            best = [
                (score, doc_id, shard) for shard in shards for score, doc_id in shard.vectors.top(query, k)
            ]
            best.sort(key=_best_first)
            for score, doc_id, shard in best[:k]:
                dense[doc_id] = score
                shard_of[doc_id] = shard

        lexical: dict[str, float] = {}
        lexical_of: dict[str, float] = {}
        if terms:
            best = []
            for shard in shards:
                # The dense hits' BM25 comes back with the shard's top k, from the same scores.
                bm25 = shard.bm25
                own = [doc_id for doc_id, of in shard_of.items() if of is shard]
                slots, scores, own_scores = bm25.top(terms, k, [bm25.slot(doc_id) for doc_id in own])
                lexical_of.update(zip(own, own_scores.tolist(), strict=True))
                best.extend(zip(scores.tolist(), bm25.doc_ids(slots), [shard] * len(slots), strict=True))
            best.sort(key=_best_first)
            for score, doc_id, shard in best[:k]:
                lexical[doc_id] = score
                shard_of.setdefault(doc_id, shard)

        dense_of: dict[str, float] = {}
        window_of: dict[str, float | None] = {}
        if query is not None:  # one vector read per shard for all its lexical-only hits
            wanted: dict[int, tuple[Shard, list[str]]] = {}
            for doc_id in candidates.unscored(lexical, dense):
                shard = shard_of[doc_id]
                wanted.setdefault(id(shard), (shard, []))[1].append(doc_id)
            for shard, ids in wanted.values():
                dense_of.update(zip(ids, shard.vectors.cosines(ids, query), strict=True))
            # and one window read per shard for every hit (turn shards only hold windows)
            held: dict[int, tuple[Shard, list[str]]] = {}
            for doc_id, shard in shard_of.items():
                if shard.windows is not None:
                    held.setdefault(id(shard), (shard, []))[1].append(doc_id)
            for shard, ids in held.values():
                window_of.update(zip(ids, shard.window_cosines(ids, query), strict=True))
        return [
            _hit(doc_id, dense_score, lexical_score, shard_of[doc_id].row(doc_id), window_of.get(doc_id))
            for doc_id, dense_score, lexical_score in candidates.merge(dense, lexical, dense_of, lexical_of)
        ]

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

    def _drop(self, tenant: str, state: TenantState, doc_id: str) -> None:
        """Take a document out of its shard (vectors, BM25, metadata) and the bookkeeping."""
        key = state.where.pop(doc_id, None)
        if key is None:
            return
        shard = state.shards[key]
        meta = shard.row(doc_id)
        del shard.meta[doc_id]
        shard.vectors.remove(doc_id)
        shard.bm25.remove(doc_id)
        if shard.windows is not None and doc_id in shard.windows.row_of:
            shard.windows.remove(doc_id)
        if meta[4]:
            state.parts.get(meta[4], set()).discard(doc_id)
        if not len(shard):
            del state.shards[key]
        self.dirty.add((tenant, key))


def _unit_rows(rows: Any) -> Any:
    """Rows scaled to unit length, so a dot product is the cosine; zero rows stay zero."""
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0).astype(np.float32)


def _best_first(item: tuple[float, str, Shard]) -> tuple[float, str]:
    return -item[0], item[1]


def _hit(doc_id: str, dense: float, lexical: float, meta: Meta, window: float | None) -> IndexHit:
    # Positional: a frozen dataclass built by keyword costs twice as much, ~500 times a retrieve.
    # A turn document (it points at its memory) brings its text back: the hit's evidence.
    return IndexHit(doc_id, dense, lexical, meta[4], meta[5], meta[1] if meta[4] else "", window)
