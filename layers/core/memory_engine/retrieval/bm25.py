"""Okapi BM25 over pre-tokenized documents: an incremental inverted index, pure Python.

Scores follow Lucene's BM25Similarity (what OpenSearch runs), so a lexical score means the same
thing whichever index produced it: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), and per term
idf · tf / (tf + k1 · (1 - b + b · dl / avgdl)). N, df and avgdl are over the whole index, not
over the filtered subset, exactly as a filtered OpenSearch query does.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import NamedTuple

__all__ = ["Bm25", "TermCounts", "bm25_counted", "bm25_scores"]


class TermCounts(NamedTuple):
    """A document as BM25 reads it: each term's frequency, and how many terms it has in all."""

    counts: Mapping[str, int]
    length: int

    @classmethod
    def of(cls, tokens: Iterable[str]) -> TermCounts:
        counts = Counter(tokens)
        return cls(dict(counts), sum(counts.values()))

    @classmethod
    def joined(cls, parts: Iterable[TermCounts]) -> TermCounts:
        """Several documents counted as one (a run of buffered turns scored as its batch)."""
        counts: Counter[str] = Counter()
        length = 0
        for part in parts:
            counts.update(part.counts)
            length += part.length
        return cls(dict(counts), length)


class Bm25:
    """Inverted index keyed by document id; add, remove and score in any order."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[str, int]] = {}  # term -> doc id -> term frequency
        self._doc_terms: dict[str, tuple[str, ...]] = {}  # doc id -> its distinct terms, for remove
        self._doc_len: dict[str, int] = {}
        self._total_len = 0

    def __len__(self) -> int:
        return len(self._doc_len)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_len

    def add(self, doc_id: str, tokens: Iterable[str]) -> None:
        """Index a document; a document already indexed under `doc_id` is replaced."""
        if doc_id in self._doc_len:
            self.remove(doc_id)
        counts = Counter(tokens)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[doc_id] = tf
        self._doc_terms[doc_id] = tuple(counts)
        length = sum(counts.values())
        self._doc_len[doc_id] = length
        self._total_len += length

    def remove(self, doc_id: str) -> None:
        """Forget a document; unknown ids are ignored so deletes can be replayed."""
        length = self._doc_len.pop(doc_id, None)
        if length is None:
            return
        self._total_len -= length
        for term in self._doc_terms.pop(doc_id):
            postings = self._postings[term]
            del postings[doc_id]
            if not postings:
                del self._postings[term]

    def idf(self, term: str) -> float:
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (len(self._doc_len) - df + 0.5) / (df + 0.5))

    def scores(self, query_tokens: Iterable[str], allowed: Collection[str] | None = None) -> dict[str, float]:
        """BM25 score of every document (within `allowed`, if given) holding a query term.

        Documents matching no query term are absent rather than 0. A term repeated in the query
        counts once per repetition, as in a Lucene boolean query. Only the postings of the query
        terms are visited, so the cost follows how common the terms are, not the index size.
        Pass `allowed` as a set (or dict keys) to keep filtering O(1) per posting.
        """
        n_docs = len(self._doc_len)
        if n_docs == 0:
            return {}
        if allowed is not None and not isinstance(allowed, AbstractSet):
            allowed = set(allowed)
        avgdl = self._total_len / n_docs or 1.0
        # tf / (tf + k1 (1 - b + b dl / avgdl)) with the per-document part split out of the loop.
        base = self.k1 * (1.0 - self.b)
        per_len = self.k1 * self.b / avgdl
        doc_len = self._doc_len
        out: dict[str, float] = {}
        get = out.get
        for term, repeats in Counter(query_tokens).items():
            postings = self._postings.get(term)
            if not postings:
                continue
            df = len(postings)
            weight = repeats * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            if allowed is None:
                for doc_id, tf in postings.items():
                    out[doc_id] = get(doc_id, 0.0) + weight * tf / (tf + base + per_len * doc_len[doc_id])
            elif len(allowed) < df:  # a small filter: walk it instead of the long postings list
                for doc_id in allowed:
                    n = postings.get(doc_id)
                    if n is not None:
                        out[doc_id] = get(doc_id, 0.0) + weight * n / (n + base + per_len * doc_len[doc_id])
            else:
                for doc_id, tf in postings.items():
                    if doc_id in allowed:
                        out[doc_id] = get(doc_id, 0.0) + weight * tf / (tf + base + per_len * doc_len[doc_id])
        return out


def bm25_scores(
    docs: Mapping[str, list[str]], query_tokens: Iterable[str], k1: float = 1.2, b: float = 0.75
) -> dict[str, float]:
    """Score a small ad-hoc set of tokenized documents (IDF over that set only).

    For scoring candidates that live outside the index, such as still-buffered raw turns.
    """
    return bm25_counted(
        {doc_id: TermCounts.of(tokens) for doc_id, tokens in docs.items()}, query_tokens, k1, b
    )


def bm25_counted(
    docs: Mapping[str, TermCounts], query_tokens: Iterable[str], k1: float = 1.2, b: float = 0.75
) -> dict[str, float]:
    """`bm25_scores` over documents counted beforehand (`TermCounts`), the same scores as `Bm25`.

    Its cost follows the number of documents times the query's distinct terms, not the documents'
    length: a request scoring long texts it counted once pays for them once.
    """
    if k1 < 0 or not 0.0 <= b <= 1.0:
        raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
    n_docs = len(docs)
    if n_docs == 0:
        return {}
    avgdl = sum(doc.length for doc in docs.values()) / n_docs or 1.0
    base = k1 * (1.0 - b)
    per_len = k1 * b / avgdl
    out: dict[str, float] = {}
    for term, repeats in Counter(query_tokens).items():
        postings = [(doc_id, tf, doc.length) for doc_id, doc in docs.items() if (tf := doc.counts.get(term))]
        if not postings:
            continue
        df = len(postings)
        weight = repeats * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        for doc_id, tf, length in postings:
            out[doc_id] = out.get(doc_id, 0.0) + weight * tf / (tf + base + per_len * length)
    return out
