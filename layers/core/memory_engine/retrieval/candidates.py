"""Merging the two retrievers' candidates into one list, the way every search index answers.

A search finds up to k documents by meaning (dense: the cosine to the query vector) and up to k by
words (lexical: BM25). Fusion needs both scores of every candidate, so each adapter fills in the
score a retriever did not give (the BM25 of a dense-only hit, the cosine of a lexical-only one);
this module only decides the order and which score goes where, so the local index and OpenSearch
answer alike.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from typing import NamedTuple

__all__ = ["Scored", "merge", "unscored"]


class Scored(NamedTuple):
    """One candidate with both raw scores."""

    doc_id: str
    dense: float
    lexical: float


def merge(
    dense: Mapping[str, float],
    lexical: Mapping[str, float],
    dense_of: Mapping[str, float] | None = None,
    lexical_of: Mapping[str, float] | None = None,
) -> list[Scored]:
    """Dense candidates first, best first, then the lexical-only ones, best first.

    `dense` and `lexical` map doc id to score in rank order. `lexical_of` holds the BM25 of dense
    candidates the lexical retriever did not return, `dense_of` the cosine of lexical candidates;
    a score found in neither is 0 (a document sharing no word with the query has no BM25).
    """
    lexical_of = lexical_of or {}
    dense_of = dense_of or {}
    merged = [
        Scored(doc_id, score, lexical[doc_id] if doc_id in lexical else lexical_of.get(doc_id, 0.0))
        for doc_id, score in dense.items()
    ]
    merged += [
        Scored(doc_id, dense_of.get(doc_id, 0.0), score)
        for doc_id, score in lexical.items()
        if doc_id not in dense
    ]
    return merged


def unscored(found: Iterable[str], other: Container[str]) -> list[str]:
    """The candidates of one retriever that the other did not return, in order: those whose other
    score an adapter must compute (or ask for) before `merge`."""
    return [doc_id for doc_id in found if doc_id not in other]
