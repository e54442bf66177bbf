"""BM25 for the local index, scored with numpy: the scores of `retrieval.bm25.Bm25`, vectorised.

The pure-Python `Bm25` walks postings one by one, which is fine for a few hundred buffered turns
but costs ~80 ms when a query's terms have ~100k postings. Here each document holds an integer
slot, and a term's postings become arrays the first time a query uses the term; later writes
update those arrays in place, so a query is a handful of vector operations. Every document also
carries a group label (the local index uses its thread), so filtering is one mask. numpy is
imported lazily.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["ArrayBm25"]

_MIN_SLOTS = 64


class _TermArrays:
    """One term's postings as growable arrays; the order is arbitrary (removal swaps in the last)."""

    __slots__ = ("size", "slots", "tf")

    def __init__(self, postings: dict[int, int]) -> None:
        import numpy as np

        self.size = len(postings)
        capacity = max(8, 2 * self.size)
        self.slots: NDArray[np.intp] = np.zeros(capacity, dtype=np.intp)
        self.tf: NDArray[np.float64] = np.zeros(capacity)
        self.slots[: self.size] = np.fromiter(postings.keys(), dtype=np.intp, count=self.size)
        self.tf[: self.size] = np.fromiter(postings.values(), dtype=np.float64, count=self.size)

    def append(self, slot: int, tf: int) -> None:
        import numpy as np

        if self.size == len(self.slots):
            self.slots = np.concatenate([self.slots, np.zeros_like(self.slots)])
            self.tf = np.concatenate([self.tf, np.zeros_like(self.tf)])
        self.slots[self.size] = slot
        self.tf[self.size] = tf
        self.size += 1

    def discard(self, slot: int) -> None:
        import numpy as np

        at = int(np.flatnonzero(self.slots[: self.size] == slot)[0])
        last = self.size - 1
        self.slots[at] = self.slots[last]
        self.tf[at] = self.tf[last]
        self.size = last


class ArrayBm25:
    """Inverted index over string ids with a group label per document; same formula as `Bm25`."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        import numpy as np

        self.k1 = k1
        self.b = b
        self._slot_of: dict[str, int] = {}
        self._ids: list[str] = []  # by slot; a free slot keeps a stale id that nothing points at
        self._free: list[int] = []
        self._doc_len: NDArray[np.float64] = np.zeros(_MIN_SLOTS)
        self._group: NDArray[np.int32] = np.full(_MIN_SLOTS, -1, dtype=np.int32)  # -1: free slot
        self._postings: dict[str, dict[int, int]] = {}  # term -> slot -> term frequency
        self._doc_terms: dict[int, tuple[str, ...]] = {}
        self._arrays: dict[str, _TermArrays] = {}  # only for terms some query has used
        self._total_len = 0

    def __len__(self) -> int:
        return len(self._slot_of)

    def slot(self, doc_id: str) -> int:
        return self._slot_of[doc_id]

    def doc_id(self, slot: int) -> str:
        return self._ids[slot]

    def add(self, doc_id: str, group: int, tokens: Iterable[str]) -> None:
        """Index a document under a group label (>= 0), replacing one with the same id."""
        self.remove(doc_id)
        slot = self._take_slot(doc_id)
        counts = Counter(tokens)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[slot] = tf
            arrays = self._arrays.get(term)
            if arrays is not None:
                arrays.append(slot, tf)
        self._doc_terms[slot] = tuple(counts)
        length = sum(counts.values())
        self._doc_len[slot] = length
        self._group[slot] = group
        self._total_len += length

    def remove(self, doc_id: str) -> None:
        slot = self._slot_of.pop(doc_id, None)
        if slot is None:
            return
        for term in self._doc_terms.pop(slot):
            postings = self._postings[term]
            del postings[slot]
            if not postings:
                del self._postings[term]
                self._arrays.pop(term, None)
            elif term in self._arrays:
                self._arrays[term].discard(slot)
        self._total_len -= int(self._doc_len[slot])
        self._doc_len[slot] = 0
        self._group[slot] = -1
        self._free.append(slot)

    def scores(self, query_tokens: Iterable[str], groups: Sequence[int]) -> NDArray[np.float64]:
        """BM25 score per slot for documents in `groups`; 0 for the others and for free slots.

        Collection statistics (N, df, avgdl) are over every group, as in `Bm25.scores`.
        """
        import numpy as np

        capacity = len(self._ids)
        out = np.zeros(capacity)
        n_docs = len(self._slot_of)
        if n_docs == 0:
            return out
        avgdl = self._total_len / n_docs or 1.0
        base = self.k1 * (1.0 - self.b)
        per_len = self.k1 * self.b / avgdl
        for term, repeats in Counter(query_tokens).items():
            arrays = self._term_arrays(term)
            if arrays is None:
                continue
            df = arrays.size
            slots, tf = arrays.slots[:df], arrays.tf[:df]
            weight = repeats * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            # Slots are unique within a term, so a fancy-indexed += adds each posting once.
            out[slots] += weight * tf / (tf + base + per_len * self._doc_len[slots])
        labels = self._group[:capacity]
        inside = labels == groups[0] if len(groups) == 1 else np.isin(labels, np.asarray(groups))
        out[~inside] = 0.0
        return out

    def _term_arrays(self, term: str) -> _TermArrays | None:
        arrays = self._arrays.get(term)
        if arrays is None:
            postings = self._postings.get(term)
            if not postings:
                return None
            arrays = self._arrays[term] = _TermArrays(postings)
        return arrays

    def _take_slot(self, doc_id: str) -> int:
        import numpy as np

        if self._free:
            slot = self._free.pop()
            self._ids[slot] = doc_id
        else:
            slot = len(self._ids)
            self._ids.append(doc_id)
            if slot == len(self._doc_len):
                self._doc_len = np.concatenate([self._doc_len, np.zeros(slot)])
                self._group = np.concatenate([self._group, np.full(slot, -1, dtype=np.int32)])
        self._slot_of[doc_id] = slot
        return slot
