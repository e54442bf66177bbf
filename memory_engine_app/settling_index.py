"""An index that shows a write only some time after it, as OpenSearch does: Serverless makes a
document searchable 10-30 s after its bulk write (no refresh), a managed domain about 1 s after.

`MEMORY_ENGINE_LOCAL_INDEX_SETTLE_SECONDS` puts the local stacks' index (`make run`,
`make run-aws-local`) behind it, so an application, the smoke test or a test suite meets locally
what it meets on AWS. Tests drive it with a fake clock (`clock`), never with sleeps.

What it models, the harsher way Serverless behaves:
- an upsert is searchable only `settle_seconds` after it (before, a search does not see it, and
  an older copy of the same document, if any, still answers);
- a delete removes the copies already searchable at once, but misses a copy written less than
  `settle_seconds` before it (Serverless deletes by query, and the query cannot see that copy):
  that copy shows up later, which is what `usecases.index_purge`'s second delete exists for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from threading import Lock
from typing import Any

from memory_engine.errors import InvalidInput
from memory_engine.ports import DocKind, IndexDocument, IndexHit, Period, SearchIndex


class SettlingIndex(SearchIndex):
    """`inner` seen through a refresh delay of `settle_seconds` on `clock` (seconds, monotonic)."""

    def __init__(
        self, inner: SearchIndex, settle_seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.inner = inner
        self._settle = settle_seconds
        self._clock = clock
        self._pending: list[tuple[float, list[IndexDocument]]] = []
        self._dims: dict[str, int] = {}  # per tenant: the dimension of its vectors
        self._lock = Lock()

    @property
    def settle_seconds(self) -> float:
        """`ports.EventuallyConsistent`: deletes get their second pass this long after."""
        return self._settle

    @property
    def pending(self) -> int:
        """Documents written but not searchable yet."""
        with self._lock:
            return sum(len(docs) for _, docs in self._pending)

    def settle(self) -> None:
        """Make every write searchable now (a refresh), whatever the clock says."""
        self._apply(due=float("inf"))

    def _apply(self, due: float | None = None) -> None:
        limit = self._clock() if due is None else due
        with self._lock:
            ready = [docs for at, docs in self._pending if at <= limit]
            self._pending = [(at, docs) for at, docs in self._pending if at > limit]
            # Applied under the lock, in write order: a later write of a document wins.
            for docs in ready:
                self.inner.upsert(docs)

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if docs:
            with self._lock:
                self._check(docs)
                self._pending.append((self._clock() + self._settle, list(docs)))

    def _check(self, docs: Sequence[IndexDocument]) -> None:
        """Refuse the batch now, as OpenSearch refuses a bulk write, not when it would show: every
        vector of a tenant has the dimension of its first one (what the mapping fixes)."""
        dims = dict(self._dims)
        for doc in docs:
            for vector in (doc.vector, doc.window_vector or doc.vector):
                dim = dims.setdefault(doc.tenant, len(vector))
                if len(vector) != dim:
                    raise InvalidInput(
                        f"document {doc.doc_id!r} has a {len(vector)}-dimensional vector but the "
                        f"index of tenant {doc.tenant!r} holds {dim}-dimensional ones; re-embed it "
                        "with the model that embedded the others"
                    )
        self._dims = dims

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        self._apply()
        self.inner.delete(tenant, doc_ids)

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
        self._apply()
        return self.inner.search_kinds(tenant, threads, text, vector, k, said, terms)

    def clear(self, tenant: str | None = None) -> None:
        with self._lock:
            self._pending = [
                (at, kept)
                for at, docs in self._pending
                if (kept := [doc for doc in docs if tenant is not None and doc.tenant != tenant])
            ]
        self.inner.clear(tenant)

    def __getattr__(self, name: str) -> Any:
        # The local server's own calls on its index (checkpoint, close) go to the index itself.
        return getattr(self.inner, name)
