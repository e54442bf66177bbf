"""What OpenSearch's search responses say about each hit, as the index's candidates need it: its
cosine to the query (from the k-NN score, or computed from a vector kept in `_source`), its BM25
score, when it was said, a turn's text and its window's cosine. Pure functions over the JSON.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from memory_engine.adapters.aws import opensearch_bodies as bodies
from memory_engine.adapters.aws.opensearch_bodies import Body
from memory_engine.adapters.encoding import unpack_half_text
from memory_engine.ports import DocKind


def memory_of(doc_id: str, kind: DocKind) -> str | None:
    """The memory a turn document (`<memory id>:<position>`) belongs to; None for a memory's own."""
    return doc_id.rsplit(":", 1)[0] if kind == "turn" else None


class Found(NamedTuple):
    """One document as a search found it."""

    dense: float
    lexical: float
    occurred_at: datetime | None
    text: str = ""
    window: float | None = None
    unread: bool = False  # a lexical hit with no half vector: the index reads its cosine in one more search


def dense_hits(response: Body, query: Sequence[float]) -> dict[str, Found]:
    """doc id → the cosine the k-NN score stands for (a BM25 score of 0 until the nearest
    documents' words are read)."""
    found: dict[str, Found] = {}
    for hit in response["hits"]["hits"]:
        source = hit["_source"]
        doc_id = source["doc_id"]
        if doc_id not in found:  # a Serverless upsert may briefly leave two copies: keep the best
            cosine = bodies.cosine_from_score(float(hit["_score"]))
            when = moment(source.get("occurred_at"))
            found[doc_id] = Found(cosine, 0.0, when, turn_text(source), window_cosine(source, query))
    return found


def lexical_hits(response: Body, query: Sequence[float]) -> dict[str, Found]:
    """doc id → BM25 score, and the cosine to the query vector computed from the returned half
    vector (0 without a query vector; `unread` for a document written before half vectors)."""
    found: dict[str, Found] = {}
    for hit in response["hits"]["hits"]:
        source = hit["_source"]
        if source["doc_id"] in found:
            continue
        half = source.get(bodies.HALF_VECTOR_FIELD)
        cosine = _dot(query, unpack_half_text(half)) if half and query else 0.0
        when = moment(source.get("occurred_at"))
        unread = bool(query) and not half  # written before half vectors
        text, window = turn_text(source), window_cosine(source, query)
        found[source["doc_id"]] = Found(cosine, float(hit["_score"]), when, text, window, unread)
    return found


def window_cosine(source: Body, query: Sequence[float]) -> float | None:
    """The query's cosine to a turn document's window vector (stored unit length, base64 float16);
    None without one."""
    stored = source.get("window_vector")
    if not stored or not query:
        return None
    return _dot(query, unpack_half_text(stored))


def knn_scores(response: Body) -> dict[str, float]:
    """doc id → the k-NN score as OpenSearch gave it (of a document's best copy)."""
    found: dict[str, float] = {}
    for hit in response["hits"]["hits"]:
        found.setdefault(hit["_source"]["doc_id"], float(hit["_score"]))
    return found


def words(response: Body, nearest: Mapping[str, float]) -> dict[str, float]:
    """doc id → BM25 score of the nearest documents: each one's score in `nearest_words_query` (its
    k-NN score plus its BM25) less its k-NN score from the k-NN search (`nearest`); 0 for one that
    shares no word with the query. A document the k-NN search did not return is left out (its BM25
    reads as 0, as for any dense hit the words of the nearest do not reach)."""
    found: dict[str, float] = {}
    for hit in response["hits"]["hits"]:
        doc_id = hit["_source"]["doc_id"]
        if doc_id in found or doc_id not in nearest:
            continue
        found[doc_id] = max(0.0, float(hit["_score"]) - nearest[doc_id])
    return found


def turn_text(source: Body) -> str:
    """A turn document's text (asked for in `_source` of turn searches only)."""
    return str(source.get(bodies.TEXT_FIELD["turn"]) or "")


def moment(value: Any) -> datetime | None:
    """A stored ISO date back as a datetime; None when absent (documents indexed before the field)."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def vector_cosines(response: Body, query: Sequence[float]) -> dict[str, float]:
    """doc id → the query's cosine to the full `vector` each hit brought back (`vectors_query`)."""
    found: dict[str, float] = {}
    for hit in response["hits"]["hits"]:
        stored = hit["_source"].get("vector") or []
        found.setdefault(hit["_source"]["doc_id"], _dot(query, stored))
    return found


def _dot(query: Sequence[float], stored: Sequence[float]) -> float:
    """The cosine of two unit vectors (the query is unit length, and so is every stored vector)."""
    return float(sum(map(operator.mul, query, stored)))
