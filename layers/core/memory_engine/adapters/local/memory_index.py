"""In-process hybrid search index: dense cosine over numpy matrices plus BM25, per tenant.

Local stand-in for OpenSearch (k-NN + BM25), rebuilt from the store at start. Each memory thread
keeps its vectors in its own contiguous float32 block, so a search confined to a few threads is a
few matrix-vector products with no gathering, whatever else the tenant holds. BM25 is vectorised
(`ArrayBm25`, same scores as `retrieval.bm25`) with the thread as each document's group label.
numpy is imported inside methods: importing this module costs nothing for a function that never
searches locally.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memory_engine.adapters.local.array_bm25 import ArrayBm25
from memory_engine.errors import InvalidInput
from memory_engine.ports import DocKind, IndexDocument, IndexHit
from memory_engine.retrieval.text import tokenize

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]
    Scores = NDArray[np.float64]

__all__ = ["LocalSearchIndex"]

_MIN_ROWS = 16
# Below this many matrix cells a single-threaded einsum beats BLAS: OpenBLAS splits even a
# 10k x 384 product over both cores, and when the server, the worker or the embedding model keep
# those cores busy, the hand-off alone can cost 10 ms (measured: 0.6 ms einsum vs 0.3-12 ms BLAS).
_BLAS_MIN_CELLS = 1 << 24


class _Block:
    """The vectors of one thread: rows 0..n-1 of a growable matrix, kept dense by swap-removal."""

    __slots__ = ("ids", "matrix", "row_of")

    def __init__(self, dim: int) -> None:
        import numpy as np

        self.matrix: Matrix = np.zeros((_MIN_ROWS, dim), dtype=np.float32)
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def put(self, doc_id: str, vector: Matrix) -> None:
        import numpy as np

        row = self.row_of.get(doc_id)
        if row is None:
            row = len(self.ids)
            if row == self.matrix.shape[0]:
                grown = np.zeros((row * 2, self.matrix.shape[1]), dtype=np.float32)
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

    def similarities(self, query: Matrix) -> Matrix:
        import numpy as np

        rows = self.matrix[: len(self.ids)]
        if rows.size < _BLAS_MIN_CELLS:
            return np.einsum("ij,j->i", rows, query)
        return rows @ query


class _Tenant:
    """One tenant's documents. Vectors live in one block per (kind, thread); BM25 is kept per kind,
    so each kind has its own collection statistics, as separate fields would have in OpenSearch."""

    __slots__ = ("blocks", "bm25", "dim", "docs", "parts", "thread_codes")

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.docs: dict[str, IndexDocument] = {}  # stored without the vector: the block holds it
        self.blocks: dict[tuple[DocKind, str], _Block] = {}
        self.bm25: dict[DocKind, ArrayBm25] = {}
        self.parts: dict[str, set[str]] = {}  # memory id -> its turn documents, for cascading deletes
        self.thread_codes: dict[str, int] = {}  # BM25 group label of each thread ever seen

    def thread_code(self, thread: str) -> int:
        return self.thread_codes.setdefault(thread, len(self.thread_codes))

    def lexical(self, kind: DocKind) -> ArrayBm25:
        bm25 = self.bm25.get(kind)
        if bm25 is None:
            bm25 = self.bm25[kind] = ArrayBm25()
        return bm25


class LocalSearchIndex:
    """SearchIndex held in memory, safe to share between server threads and the worker."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._tenants: dict[str, _Tenant] = {}

    def __len__(self) -> int:
        with self._lock:
            return sum(len(t.docs) for t in self._tenants.values())

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        """Add documents, replacing any with the same (tenant, doc_id); vectors are re-normalised."""
        if not docs:
            return
        import numpy as np

        with self._lock:
            dims: dict[str, int] = {}
            for doc in docs:
                known = self._tenants[doc.tenant].dim if doc.tenant in self._tenants else None
                dim = dims.setdefault(doc.tenant, known if known is not None else len(doc.vector))
                if len(doc.vector) != dim:
                    # Checked for the whole batch first, so a bad document writes nothing.
                    raise InvalidInput(
                        f"document {doc.doc_id!r} has a {len(doc.vector)}-dimensional vector but the "
                        f"index of tenant {doc.tenant!r} holds {dim}-dimensional ones; re-embed it with "
                        "the same model, or clear and rebuild the index after changing models"
                    )
            if len(set(dims.values())) == 1:
                vectors = list(_unit_rows(np.asarray([doc.vector for doc in docs], dtype=np.float32)))
            else:  # tenants embedded with different models in one batch: rows of unequal length
                vectors = [_unit_rows(np.asarray([doc.vector], dtype=np.float32))[0] for doc in docs]
            for doc, vector in zip(docs, vectors, strict=True):
                tenant = self._tenants.get(doc.tenant)
                if tenant is None:
                    tenant = self._tenants[doc.tenant] = _Tenant(dims[doc.tenant])
                old = tenant.docs.get(doc.doc_id)
                if old is not None and (old.thread, old.kind) != (doc.thread, doc.kind):
                    self._drop(tenant, old)
                block = tenant.blocks.get((doc.kind, doc.thread))
                if block is None:
                    block = tenant.blocks[doc.kind, doc.thread] = _Block(tenant.dim)
                block.put(doc.doc_id, vector)
                tenant.lexical(doc.kind).add(doc.doc_id, tenant.thread_code(doc.thread), tokenize(doc.text))
                if old is not None and old.memory_id and old.memory_id != doc.memory_id:
                    tenant.parts.get(old.memory_id, set()).discard(doc.doc_id)
                if doc.memory_id:
                    tenant.parts.setdefault(doc.memory_id, set()).add(doc.doc_id)
                tenant.docs[doc.doc_id] = doc.model_copy(update={"vector": []})

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        """Remove documents and the turn documents of those memories; ids the index does not hold
        are ignored, so deletes can be replayed."""
        with self._lock:
            state = self._tenants.get(tenant)
            if state is None:
                return
            doomed = list(doc_ids)
            for doc_id in doc_ids:
                doomed.extend(state.parts.pop(doc_id, ()))
            for doc_id in doomed:
                doc = state.docs.pop(doc_id, None)
                if doc is None:
                    continue
                self._drop(state, doc)
                if doc.memory_id:
                    state.parts.get(doc.memory_id, set()).discard(doc_id)
            if not state.docs:
                del self._tenants[tenant]  # an emptied tenant may come back with another model

    def clear(self, tenant: str | None = None) -> None:
        with self._lock:
            if tenant is None:
                self._tenants.clear()
            else:
                self._tenants.pop(tenant, None)

    def get(self, tenant: str, doc_id: str) -> IndexDocument | None:
        """The stored document with its (unit-normalised, float32-rounded) vector, or None."""
        with self._lock:
            state = self._tenants.get(tenant)
            doc = state.docs.get(doc_id) if state else None
            if state is None or doc is None:
                return None
            block = state.blocks[doc.kind, doc.thread]
            vector = block.matrix[block.row_of[doc_id]].tolist()
            return doc.model_copy(update={"vector": vector})

    def search(
        self,
        tenant: str,
        threads: Sequence[str],
        text: str,
        vector: Sequence[float],
        k: int,
        kind: DocKind = "memory",
    ) -> list[IndexHit]:
        """Up to k dense and up to k lexical candidates of one kind within `threads`, merged by doc id.

        Each hit carries both scores: a document found by one retriever gets the other's score
        computed too (0 lexical when it shares no term), so fusion never sees a made-up zero.
        Dense hits come first, best first, then lexical-only hits, best first. An empty `vector`
        searches by words only; an empty `text` by meaning only.
        """
        if k <= 0:
            return []
        import numpy as np

        with self._lock:
            state = self._tenants.get(tenant)
            if state is None:
                return []
            blocks = {t: state.blocks[kind, t] for t in dict.fromkeys(threads) if (kind, t) in state.blocks}
            bm25 = state.bm25.get(kind)
            if not blocks or bm25 is None:
                return []

            dense: dict[str, float] = {}
            sims: dict[str, Matrix] = {}
            if len(vector):
                if len(vector) != state.dim:
                    raise InvalidInput(
                        f"the query vector has {len(vector)} dimensions but tenant {tenant!r} is indexed "
                        f"with {state.dim}; embed the query with the model that embedded the memories"
                    )
                query = _unit_rows(np.asarray([vector], dtype=np.float32))[0]
                sims = {t: block.similarities(query) for t, block in blocks.items()}
                dense = _top_dense(blocks, sims, k)

            lexical: dict[str, float] = {}
            by_slot: Scores | None = None
            terms = tokenize(text)
            if terms:
                by_slot = bm25.scores(terms, [state.thread_codes[t] for t in blocks])
                lexical = _top_lexical(bm25, by_slot, k)

            docs = state.docs
            hits = [
                IndexHit(
                    doc_id=doc_id,
                    dense=score,
                    lexical=float(by_slot[bm25.slot(doc_id)]) if by_slot is not None else 0.0,
                    memory_id=docs[doc_id].memory_id,
                    occurred_at=docs[doc_id].occurred_at,
                    text=docs[doc_id].text if kind == "turn" else "",
                )
                for doc_id, score in dense.items()
            ]
            for doc_id, score in lexical.items():
                if doc_id not in dense:
                    thread = docs[doc_id].thread
                    cosine = float(sims[thread][blocks[thread].row_of[doc_id]]) if sims else 0.0
                    doc = docs[doc_id]
                    hits.append(
                        IndexHit(
                            doc_id=doc_id,
                            dense=cosine,
                            lexical=score,
                            memory_id=doc.memory_id,
                            occurred_at=doc.occurred_at,
                            text=doc.text if kind == "turn" else "",
                        )
                    )
            return hits

    @staticmethod
    def _drop(state: _Tenant, doc: IndexDocument) -> None:
        """Take a document out of its vector block and its kind's BM25."""
        key = (doc.kind, doc.thread)
        block = state.blocks[key]
        block.remove(doc.doc_id)
        if not len(block):
            del state.blocks[key]
        state.lexical(doc.kind).remove(doc.doc_id)


def _unit_rows(rows: Any) -> Any:
    """Rows scaled to unit length, so a dot product is the cosine; zero rows stay zero."""
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0).astype(np.float32)


def _top_dense(blocks: dict[str, _Block], sims: dict[str, Matrix], k: int) -> dict[str, float]:
    """The k best cosines over all blocks, best first (ties broken by doc id for stable output)."""
    import numpy as np

    best: list[tuple[float, str]] = []
    for thread, block in blocks.items():
        scores = sims[thread]
        rows = np.argpartition(-scores, k - 1)[:k] if len(scores) > k else np.arange(len(scores))
        best.extend((float(scores[row]), block.ids[row]) for row in rows)
    best.sort(key=lambda item: (-item[0], item[1]))
    return {doc_id: score for score, doc_id in best[:k]}


def _top_lexical(bm25: ArrayBm25, by_slot: Scores, k: int) -> dict[str, float]:
    """The k best BM25 scores (documents holding a query term only), best first."""
    import numpy as np

    slots = np.flatnonzero(by_slot > 0)
    if len(slots) > k:
        slots = slots[np.argpartition(-by_slot[slots], k - 1)[:k]]
    best = [(float(by_slot[slot]), bm25.doc_id(int(slot))) for slot in slots]
    best.sort(key=lambda item: (-item[0], item[1]))
    return {doc_id: score for score, doc_id in best}
