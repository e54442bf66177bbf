"""BM25 for the local index, scored with numpy: the scores of `retrieval.bm25.Bm25`, vectorised.

The pure-Python `Bm25` walks postings one by one, which is fine for a few hundred buffered turns
but costs ~80 ms when a query's terms have ~100k postings. Here each document holds an integer
slot and each term its postings as growable int32 arrays (slots, term frequencies, document
lengths), updated in place by writes, so a query is a handful of vector operations over the
postings of its own terms; `top` reads the common terms' postings only where they can still
matter (MaxScore), so its cost grows far slower than the shard.

The local index keeps one `ArrayBm25` per (kind, thread) shard, so a query never touches another
thread's postings, and shares one `Bm25Stats` between the shards of a kind: document frequencies,
document count and average length are the kind's, as one field of one OpenSearch index has them.
Documents may also carry a group label, for callers that keep several groups in one instance.
numpy is imported lazily. The persisted index stores a shard as arrays (`to_arrays`, `from_arrays`):
loading one builds no per-document Python objects beyond the ids.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memory_engine.adapters.local.bm25_postings import Bm25Stats, TermPostings

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    from numpy.typing import NDArray

    _Norm = Callable[["TermPostings", NDArray[np.intp] | None], NDArray[np.float64]]

__all__ = ["ArrayBm25", "Bm25Stats"]

# Index folders of format 1 pickled the postings under this name (`bench/index_upgrade.py` reads them).
_TermArrays = TermPostings

_MIN_SLOTS = 64
# Postings sampled for the lower bound on a query's k-th best score: enough that its k-th best
# (k = 50 or 100) sits near the true one, few enough to partition in microseconds.
_FLOOR_SAMPLE = 2048
# Up to this many postings a query scores every one and picks the k best from the whole slot
# array: below ~50k postings that costs less than MaxScore's bookkeeping (10k memories: ~11k
# per query on the turn shard; 100k memories: ~114k).
_DIRECT_POSTINGS = 50_000


class ArrayBm25:
    """Inverted index over string ids (optionally labelled by group); same formula as `Bm25`."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, stats: Bm25Stats | None = None) -> None:
        import numpy as np

        self.k1 = k1
        self.b = b
        self.stats = stats if stats is not None else Bm25Stats()
        self._slot_of: dict[str, int] = {}
        self._ids: list[str] = []  # by slot; a free slot keeps a stale id that nothing points at
        self._free: list[int] = []
        self._doc_len: NDArray[np.float64] = np.zeros(_MIN_SLOTS)
        self._group: NDArray[np.int32] = np.full(_MIN_SLOTS, -1, dtype=np.int32)  # -1: free slot
        self._doc_terms: dict[int, tuple[str, ...]] = {}
        self._arrays: dict[str, TermPostings] = {}
        # Loaded from arrays: the terms of slots that were not added since, derived from the
        # postings on the first removal that needs them (see `_terms_of`).
        self._loaded = False
        self._derived: tuple[NDArray[np.int64], NDArray[np.int32], list[str]] | None = None

    def __len__(self) -> int:
        return len(self._slot_of)

    def slot(self, doc_id: str) -> int:
        return self._slot_of[doc_id]

    def doc_id(self, slot: int) -> str:
        return self._ids[slot]

    def doc_ids(self, slots: Any) -> list[str]:
        ids = self._ids
        return [ids[slot] for slot in slots.tolist()]

    def add(self, doc_id: str, group: int, tokens: Iterable[str]) -> None:
        """Index a document under a group label (>= 0), replacing one with the same id."""
        self.remove(doc_id)
        slot = self._take_slot(doc_id)
        counts = Counter(tokens)
        length = sum(counts.values())
        for term, tf in counts.items():
            arrays = self._arrays.get(term)
            if arrays is None:
                arrays = self._arrays[term] = TermPostings()
            arrays.append(slot, tf, length)
        self._doc_terms[slot] = tuple(counts)
        self._doc_len[slot] = length
        self._group[slot] = group
        self.stats.add(counts, length)

    def remove(self, doc_id: str) -> None:
        slot = self._slot_of.pop(doc_id, None)
        if slot is None:
            return
        terms = self._doc_terms.pop(slot, None)
        if terms is None:
            terms = self._terms_of(slot)
        for term in terms:
            arrays = self._arrays[term]
            arrays.discard(slot)
            if not len(arrays):
                del self._arrays[term]
        self.stats.remove(terms, int(self._doc_len[slot]))
        self._doc_len[slot] = 0
        self._group[slot] = -1
        self._free.append(slot)

    def scores(self, query_tokens: Iterable[str], groups: Sequence[int] | None = None) -> NDArray[np.float64]:
        """BM25 score per slot (documents of `groups` only, every group when None); 0 for the
        others and for free slots. Collection statistics are the shared `stats`."""
        import numpy as np

        out = self._every_posting(*self._weighted(query_tokens))
        if groups is not None:
            labels = self._group[: len(out)]
            inside = labels == groups[0] if len(groups) == 1 else np.isin(labels, np.asarray(groups))
            out[~inside] = 0.0
        return out

    def top(
        self, query_tokens: Iterable[str], k: int, also: Sequence[int] = ()
    ) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
        """The k best slots for a query (documents holding a query term; every group), in no
        order, with their scores; and the scores of the slots `also` names (0 where a slot holds
        no query term). Exact: the scores are `scores`' own, bit for bit.

        MaxScore (Turtle and Flood, 1995), vectorised: a term adds at most its ceiling to a
        document (its weight times its best normalised frequency), so once a lower bound on the
        k-th best score exceeds the summed ceilings of the terms not read yet, a document holding
        none of the terms read so far cannot be among the k best. Terms are read rarest first, in
        full; the common ones left (most of the postings at 800k documents) are read only at the
        candidates and the `also` slots, and the k best are looked for among the candidates,
        never the whole slot array. The lower bound is first an estimate, checked at the end,
        then if need be a sure one (`_maxscore`). A query of at most `_DIRECT_POSTINGS` postings
        skips all this: it scores every posting, which costs less there.
        """
        import numpy as np

        terms, norm = self._weighted(query_tokens)
        if sum(arrays.size for arrays, _, _ in terms) <= _DIRECT_POSTINGS:
            out = self._every_posting(terms, norm)
            best = _best(np.flatnonzero(out > 0), out, k)
            return best, out[best], out[np.asarray(also, dtype=np.intp)]
        found = self._maxscore(terms, norm, k, also, guess=True)
        if found is None:
            found = self._maxscore(terms, norm, k, also, guess=False)
        assert found is not None  # without a guess the floor is a bound: no check to fail
        return found

    def _every_posting(
        self, terms: list[tuple[TermPostings, float, float]], norm: _Norm
    ) -> NDArray[np.float64]:
        """The score array over every slot, every posting of every term added."""
        import numpy as np

        out = np.zeros(len(self._ids))
        for arrays, weight, _ in terms:
            # Slots are unique within a term, so a fancy-indexed += adds each posting once.
            out[arrays.slots[: arrays.size]] += weight * norm(arrays, None)
        return out

    def _maxscore(
        self,
        terms: list[tuple[TermPostings, float, float]],
        norm: _Norm,
        k: int,
        also: Sequence[int],
        guess: bool,
    ) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]] | None:
        """`top` with a floor that is a lower bound on the k-th best score by construction (the
        k-th best of a sample of one term's documents), or, with `guess`, an estimate of the
        k-th best of that term's documents (the k/step-th best of its 1-in-step sample): far
        closer to the true k-th best at 800k documents, so far fewer candidates, but only a bound
        if at least k documents reach it, which is checked at the end (None if not)."""
        import numpy as np

        out = np.zeros(len(self._ids))
        asked = np.asarray(also, dtype=np.intp)
        left = sum(ceiling for _, _, ceiling in terms)
        floor = 0.0
        read = 0
        while read < len(terms) and left >= floor:
            arrays, weight, ceiling = terms[read]
            slots = arrays.slots[: arrays.size]
            out[slots] += weight * norm(arrays, None)
            left -= ceiling
            read += 1
            if len(slots) >= k:
                step = max(1, len(slots) // _FLOOR_SAMPLE)
                sample = out[slots[::step]]
                rank = -(-k // step) if guess else k
                if len(sample) >= rank:
                    floor = max(floor, float(np.partition(sample, len(sample) - rank)[len(sample) - rank]))
        if not read:
            return np.zeros(0, dtype=np.intp), np.zeros(0), out[asked]
        pieces = [arrays.slots[: arrays.size] for arrays, _, _ in terms[:read]]
        found = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
        if read < len(terms):  # the documents that may still reach the floor, and the asked ones
            found = found[out[found] + left >= floor]
            wanted = np.zeros(len(out), dtype=bool)
            wanted[found] = True
            wanted[asked] = True
            for arrays, weight, _ in terms[read:]:
                slots = arrays.slots[: arrays.size]
                at = np.flatnonzero(wanted[slots])
                out[slots[at]] += weight * norm(arrays, at)
        if floor > 0.0:
            found = found[out[found] >= floor]
        if len(pieces) > 1:
            found = np.unique(found)
        if guess and floor > 0.0 and len(found) < k:
            return None  # fewer than k reach the estimate: it was above the k-th best
        best = _best(found, out, k)
        return best, out[best], out[asked]

    def _weighted(self, query_tokens: Iterable[str]) -> tuple[list[tuple[TermPostings, float, float]], _Norm]:
        """Per query term this shard holds, its postings, its weight (idf times its repeats in
        the query) and the most it adds to a document's score (its weight times the normalised
        frequency of its largest tf in its shortest document, a bound over the postings); heaviest
        (rarest) first: the order both `scores` and `top` add them in, so their sums agree to the
        bit. And the term-frequency normalisation of this query's statistics:
        tf / (tf + k1 (1 - b) + k1 b dl / avgdl) for a term's settled postings, or for those at
        the positions given."""
        stats = self.stats
        terms: list[tuple[TermPostings, float, float]] = []
        n_docs = stats.n_docs
        avgdl = stats.total_len / n_docs if n_docs else 1.0
        base = self.k1 * (1.0 - self.b)
        per_len = self.k1 * self.b / (avgdl or 1.0)
        doc_len = self._doc_len

        def norm(arrays: TermPostings, at: NDArray[np.intp] | None) -> NDArray[np.float64]:
            tf, lens = arrays.tf[: arrays.size], arrays.lengths(doc_len)
            if at is not None:
                tf, lens = tf[at], lens[at]
            return tf / (tf + base + per_len * lens)

        if not self._slot_of or n_docs == 0:
            return terms, norm
        for term, repeats in Counter(query_tokens).items():
            arrays = self._arrays.get(term)
            if arrays is None:
                continue
            arrays.settle()
            df = stats.df[term]
            weight = repeats * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            max_tf, min_len = arrays.best(doc_len)
            # Nudged up so a sum of bounds never falls below a sum of scores by rounding.
            ceiling = weight * max_tf / (max_tf + base + per_len * min_len) * (1 + 1e-9)
            terms.append((arrays, weight, ceiling))
        terms.sort(key=lambda term: -term[1])
        return terms, norm

    def _terms_of(self, slot: int) -> tuple[str, ...]:
        """The distinct terms of a slot loaded from arrays and not added since. They are found in
        the postings, whose every term was indexed once per slot: derived for all slots at once on
        first need (a slot added later has its terms in `_doc_terms`, which takes precedence, and
        a loaded slot's postings stay as loaded until it is removed)."""
        if not self._loaded:
            raise KeyError(slot)
        if self._derived is None:
            import numpy as np

            terms = list(self._arrays)
            for arrays in self._arrays.values():
                arrays.settle()
            sizes = np.fromiter((arrays.size for arrays in self._arrays.values()), np.int64, len(terms))
            pieces = [arrays.slots[: arrays.size] for arrays in self._arrays.values()]
            slots = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
            codes = np.repeat(np.arange(len(terms), dtype=np.int32), sizes)
            order = np.argsort(slots, kind="stable")
            ends = np.cumsum(np.bincount(slots.astype(np.int64), minlength=len(self._ids)))
            self._derived = (ends, codes[order], terms)
        ends, codes, terms = self._derived
        start = int(ends[slot - 1]) if slot else 0
        return tuple(terms[code] for code in codes[start : int(ends[slot])].tolist())

    def to_arrays(self) -> dict[str, Any]:
        """The index as flat arrays plus two string lists (what `from_arrays` takes back): per slot
        its id ("" when free), length and group; per term its postings, concatenated."""
        import numpy as np

        n = len(self._ids)
        live = set(self._slot_of.values())
        terms = list(self._arrays)
        for arrays in self._arrays.values():
            arrays.settle()
        sizes = np.fromiter((arrays.size for arrays in self._arrays.values()), np.int64, len(terms))
        parts = list(self._arrays.values())
        return {
            "ids": [doc_id if slot in live else "" for slot, doc_id in enumerate(self._ids)],
            "terms": terms,
            "doc_len": self._doc_len[:n].copy(),
            "group": self._group[:n].copy(),
            "term_ends": np.cumsum(sizes),
            "post_slots": np.concatenate([a.slots[: a.size] for a in parts] or [np.zeros(0, np.int32)]),
            "post_tf": np.concatenate([a.tf[: a.size] for a in parts] or [np.zeros(0, np.int32)]),
            "k1_b": np.asarray([self.k1, self.b]),
        }

    @classmethod
    def from_arrays(cls, data: Mapping[str, Any], stats: Bm25Stats) -> ArrayBm25:
        """An index from `to_arrays`' output (the arrays are used in place, not copied), counted
        into `stats`."""
        import numpy as np

        k1, b = (float(x) for x in data["k1_b"])
        bm25 = cls(k1, b, stats)
        ids: list[str] = data["ids"]
        group = data["group"]
        free = np.flatnonzero(group < 0).tolist()
        bm25._ids = ids
        bm25._free = free[::-1]  # lowest slot reused first
        bm25._doc_len, bm25._group = data["doc_len"], group
        if free:
            bm25._slot_of = {ids[slot]: slot for slot in np.flatnonzero(group >= 0).tolist()}
        else:
            bm25._slot_of = dict(zip(ids, range(len(ids)), strict=True))
        ends = data["term_ends"].tolist()
        slots, tf = data["post_slots"], data["post_tf"]
        # Every posting's document length in one gather (~0.1 s for 20M postings), so no query
        # after a start pays it term by term.
        lens = bm25._doc_len[slots].astype(np.int32)
        df = stats.df
        start = 0
        for term, end in zip(data["terms"], ends, strict=True):
            arrays = TermPostings.__new__(TermPostings)
            arrays.size, arrays.slots, arrays.tf = end - start, slots[start:end], tf[start:end]
            arrays.lens = lens[start:end]
            arrays.max_tf = arrays.min_len = None
            arrays.new_slots, arrays.new_tf, arrays.new_lens = [], [], []
            bm25._arrays[term] = arrays
            df[term] = df.get(term, 0) + end - start
            start = end
        stats.n_docs += len(bm25._slot_of)
        stats.total_len += int(bm25._doc_len[group >= 0].sum())
        bm25._loaded = True
        return bm25

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


def _best(
    slots: NDArray[np.int32] | NDArray[np.intp], scores: NDArray[np.float64], k: int
) -> NDArray[np.intp]:
    """The k best of `slots` by score; documents tied at the k-th score go in by slot, lowest
    first, so the same k come back whatever order the slots came in (duplicated lines tie
    often) and whichever way `top` found them."""
    import numpy as np

    best: NDArray[np.intp] = slots.astype(np.intp)
    if len(best) <= k:
        return best
    score = scores[best]
    kth = np.partition(score, len(score) - k)[len(score) - k]
    above = best[score > kth]
    tied = np.sort(best[score == kth])
    return np.concatenate([above, tied[: k - len(above)]])
