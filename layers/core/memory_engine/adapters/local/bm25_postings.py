"""The postings of the local BM25 (`array_bm25.ArrayBm25`): one term's postings in one shard as
growable numpy arrays, and the collection statistics the shards of a kind share.

numpy is imported lazily.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["Bm25Stats", "TermPostings"]


class Bm25Stats:
    """Collection statistics shared by every shard of one kind: N, total length, df per term."""

    __slots__ = ("df", "n_docs", "total_len")

    def __init__(self) -> None:
        self.df: dict[str, int] = {}
        self.n_docs = 0
        self.total_len = 0

    def add(self, terms: Iterable[str], length: int) -> None:
        df = self.df
        for term in terms:
            df[term] = df.get(term, 0) + 1
        self.n_docs += 1
        self.total_len += length

    def remove(self, terms: Iterable[str], length: int) -> None:
        df = self.df
        for term in terms:
            left = df[term] - 1
            if left:
                df[term] = left
            else:
                del df[term]
        self.n_docs -= 1
        self.total_len -= length


class TermPostings:
    """One term's postings in this shard; the order is arbitrary (removal swaps in the last).

    Each posting holds its slot, the term's frequency there and the document's length, so a
    query normalises term frequencies reading the term's own arrays only: gathering 100k
    postings' lengths from the shard's length column, by slot, cost as much as the rest of a
    query's BM25 at 800k documents. `lens` is None until first needed where the postings were
    loaded from a file (the lengths are derived from the length column then, once).

    Appends go to Python lists first (a numpy scalar store costs ~20 us, a list append ~50
    ns: indexing 9 documents per memory would spend most of its time there) and join the arrays
    the next time a query or a removal needs them.
    """

    __slots__ = ("lens", "max_tf", "min_len", "new_lens", "new_slots", "new_tf", "size", "slots", "tf")

    def __init__(self) -> None:
        import numpy as np

        self.size = 0
        self.slots: NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self.tf: NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self.lens: NDArray[np.int32] | None = np.zeros(0, dtype=np.int32)
        self.new_slots: list[int] = []
        self.new_tf: list[int] = []
        self.new_lens: list[int] = []
        # The largest tf and the shortest document among the postings (None: not known yet),
        # the term's best possible normalised frequency. A removal leaves them as they were:
        # still bounds, if looser ones.
        self.max_tf: int | None = 0
        self.min_len: int | None = 1 << 30

    def __len__(self) -> int:
        return self.size + len(self.new_slots)

    def append(self, slot: int, tf: int, length: int) -> None:
        self.new_slots.append(slot)
        self.new_tf.append(tf)
        self.new_lens.append(length)
        if self.max_tf is not None and self.min_len is not None:
            self.max_tf = max(self.max_tf, tf)
            self.min_len = min(self.min_len, length)

    def settle(self) -> None:
        """Move pending appends into the arrays (capacity doubles, so appends stay amortised O(1))."""
        if not self.new_slots:
            return
        import numpy as np

        size, extra = self.size, len(self.new_slots)
        if size + extra > len(self.slots):
            capacity = max(4, 2 * (size + extra))
            slots, tf = np.zeros(capacity, dtype=np.int32), np.zeros(capacity, dtype=np.int32)
            slots[:size], tf[:size] = self.slots[:size], self.tf[:size]
            self.slots, self.tf = slots, tf
            if self.lens is not None:
                lens = np.zeros(capacity, dtype=np.int32)
                lens[:size] = self.lens[:size]
                self.lens = lens
        self.slots[size : size + extra] = self.new_slots
        self.tf[size : size + extra] = self.new_tf
        if self.lens is not None:
            self.lens[size : size + extra] = self.new_lens
        self.size = size + extra
        self.new_slots, self.new_tf, self.new_lens = [], [], []

    def lengths(self, doc_len: NDArray[np.float64]) -> NDArray[np.int32]:
        """The settled postings' document lengths (derived from the length column if unknown)."""
        import numpy as np

        if self.lens is None:
            lens = np.zeros(len(self.slots), dtype=np.int32)
            lens[: self.size] = doc_len[self.slots[: self.size]]
            self.lens = lens
        return self.lens[: self.size]

    def best(self, doc_len: NDArray[np.float64]) -> tuple[int, int]:
        """The largest tf and the shortest document length among the postings (or beyond)."""
        if self.max_tf is None or self.min_len is None:
            self.settle()
            self.max_tf = int(self.tf[: self.size].max(initial=0))
            self.min_len = int(self.lengths(doc_len).min(initial=1 << 30))
        return self.max_tf, self.min_len

    def __getstate__(self) -> tuple[int, NDArray[np.int32], NDArray[np.int32]]:
        self.settle()
        return self.size, self.slots[: self.size].copy(), self.tf[: self.size].copy()

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) == 2:  # the default form of a slots class
            state = tuple(state[1][name] for name in ("size", "slots", "tf"))
        self.size, self.slots, self.tf = state
        self.lens = None
        self.max_tf = self.min_len = None
        self.new_slots, self.new_tf, self.new_lens = [], [], []

    def discard(self, slot: int) -> None:
        import numpy as np

        self.settle()
        at = int(np.flatnonzero(self.slots[: self.size] == slot)[0])
        last = self.size - 1
        self.slots[at] = self.slots[last]
        self.tf[at] = self.tf[last]
        if self.lens is not None:
            self.lens[at] = self.lens[last]
        self.size = last
