"""OpenSearch request bodies as pure data: the index mapping and every query the adapter sends.

Kept apart from the client so tests can read them, and so that the one rule that matters is easy
to check: every query carries the tenant filter, and the k-NN query filters *inside* the knn clause
(efficient filtering on faiss/lucene HNSW: the k nearest among the tenant's and threads' documents,
not the k nearest overall filtered afterwards, which the deprecated nmslib post-filter did).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Literal

from memory_engine.adapters.encoding import pack_half_text, unit_vector
from memory_engine.ports import DocKind, IndexDocument, Period
from memory_engine.retrieval.text import STOP_WORDS

Engine = Literal["faiss", "lucene"]
Analyzer = Literal["nori", "cjk", "standard"]
Body = dict[str, Any]

TEXT_ANALYZER = "memory_text"
# HNSW graph parameters: OpenSearch's defaults, explicit so a reindex rebuilds the same graph.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
# Memory and turn documents keep their words in separate fields, so that BM25 statistics (document
# count, average length) stay per kind, as the local index keeps them.
TEXT_FIELD: dict[DocKind, str] = {"memory": "text", "turn": "turn_text"}
# Vectors that are only read back, never searched, are kept in `_source` alone as base64 float16
# (`encoding.pack_half_text`), ~1 KB at 384 dimensions against ~8 KB of numbers:
# - a turn's window vector (its cosine to the query is computed for the turn candidates);
# - a copy of every document's own vector, `half_vector`: a document found by its words alone needs
#   its cosine too, and the k-NN field would come back as numbers. Documents written before it
#   have none: the adapter then reads their `vector` in one more search (`vectors_query`) until a
#   reindex writes them again.
PACKED_VECTOR: Body = {"type": "binary"}
HALF_VECTOR_FIELD = "half_vector"


# Part-of-speech tags nori drops, as the local analyzer drops them (retrieval/korean.py): endings,
# particles, affixes, bound nouns, pronouns, copulas, auxiliary predicates, determiners,
# conjunctive adverbs, interjections and punctuation are grammar, not topic.
NORI_STOPTAGS = [
    "E", "IC", "J", "MAJ", "MM", "NNB", "NNBC", "NP", "SC", "SE", "SF", "SP", "SSC", "SSO", "SY",
    "UNA", "NA", "VCN", "VCP", "VSV", "VX", "XPN", "XSA", "XSN", "XSV",
]  # fmt: skip


def analysis(analyzer: Analyzer) -> Body:
    """The `memory_text` analyzer, one for every language as the local analyzer is
    (retrieval/text.py): nori where the analysis-nori plugin exists (Amazon OpenSearch Service
    and Serverless have it), else `cjk` (bigrams for Hangul/Han/Kana, lower-cased English) or
    plain `standard`.

    nori: Korean morphology with mecab-ko-dic (the dictionary of the local analyzer), compounds
    kept whole and as parts, particles and endings dropped, Hanja read as Hangul; Latin words
    lower-cased, the local analyzer's English stop words removed and Porter-stemmed (the stemmer
    leaves Hangul alone)."""
    if analyzer == "nori":
        return {
            "tokenizer": {"memory_nori": {"type": "nori_tokenizer", "decompound_mode": "mixed"}},
            "filter": {
                "memory_nori_pos": {"type": "nori_part_of_speech", "stoptags": NORI_STOPTAGS},
                "memory_english_stop": {"type": "stop", "stopwords": sorted(STOP_WORDS)},
            },
            "analyzer": {
                TEXT_ANALYZER: {
                    "type": "custom",
                    "tokenizer": "memory_nori",
                    "filter": [
                        "memory_nori_pos",
                        "nori_readingform",
                        "lowercase",
                        "memory_english_stop",
                        "porter_stem",
                    ],
                }
            },
        }
    return {"analyzer": {TEXT_ANALYZER: {"type": analyzer}}}


def index_body(dimension: int, engine: Engine = "faiss", analyzer: Analyzer = "nori") -> Body:
    """Settings and mapping of the memories index (created by `memory-engine create-index`)."""
    keyword = {"type": "keyword"}
    return {
        "settings": {"index": {"knn": True}, "analysis": analysis(analyzer)},
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "tenant": keyword,
                "doc_id": keyword,
                "copy_id": keyword,
                "session_uuid": keyword,
                "thread": keyword,
                "kind": keyword,
                "memory_id": keyword,
                "source_dialog_uuids": keyword,
                "created_at": {"type": "date"},
                "occurred_at": {"type": "date"},
                "spoken_of": {"type": "date"},
                "text": {"type": "text", "analyzer": TEXT_ANALYZER},
                "turn_text": {"type": "text", "analyzer": TEXT_ANALYZER},
                "window_vector": PACKED_VECTOR,
                HALF_VECTOR_FIELD: PACKED_VECTOR,
                "vector": {
                    "type": "knn_vector",
                    "dimension": dimension,
                    "method": {
                        "name": "hnsw",
                        "engine": engine,
                        # Vectors are unit length (normalised on the way in), so this is the cosine.
                        "space_type": "innerproduct",
                        "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
                    },
                },
            },
        },
    }


def scope_filter(
    tenant: str,
    threads: Sequence[str] | None = None,
    doc_ids: Sequence[str] | None = None,
    kind: DocKind | None = None,
    said: Period | None = None,
) -> list[Body]:
    """The filter clauses of every query: always the tenant, then the threads, documents, kind or
    event-time range."""
    clauses: list[Body] = [{"term": {"tenant": tenant}}]
    if threads is not None:
        clauses.append({"terms": {"thread": list(threads)}})
    if doc_ids is not None:
        clauses.append({"terms": {"doc_id": list(doc_ids)}})
    if kind is not None:
        clauses.append({"term": {"kind": kind}})
    if said is not None and (said.since is not None or said.until is not None):
        clauses.append(said_filter(said))
    return clauses


def said_filter(said: Period) -> Body:
    """Documents said within the period (both ends inclusive), speaking of a day within it
    (`spoken_of`), or with no time at all (a fact's `occurred_at` is null, which OpenSearch leaves
    unindexed): `Period.holds`."""
    bounds: Body = {}
    if said.since is not None:
        bounds["gte"] = said.since.isoformat()
    if said.until is not None:
        bounds["lte"] = said.until.isoformat()
    undated: Body = {"bool": {"must_not": [{"exists": {"field": "occurred_at"}}]}}
    within = [{"range": {"occurred_at": bounds}}, {"range": {"spoken_of": bounds}}, undated]
    return {"bool": {"should": within, "minimum_should_match": 1}}


def memories_and_their_turns(tenant: str, memory_ids: Sequence[str]) -> list[Body]:
    """Filters for deleting memories: their own documents and the turn documents pointing at them."""
    either = [{"terms": {"doc_id": list(memory_ids)}}, {"terms": {"memory_id": list(memory_ids)}}]
    return [{"term": {"tenant": tenant}}, {"bool": {"should": either, "minimum_should_match": 1}}]


def added_fields() -> Body:
    """Mapping of the fields added since the first release, for an index made before them."""
    return {
        "properties": {
            "occurred_at": {"type": "date"},
            "spoken_of": {"type": "date"},
            "window_vector": PACKED_VECTOR,
            HALF_VECTOR_FIELD: PACKED_VECTOR,
        }
    }


def _returned(kind: DocKind) -> list[str]:
    """What a search hit brings back: a turn's text and window vector too, for the hit's evidence
    and the window's cosine (computed by the adapter, as a lexical hit's cosine is)."""
    fields = ["doc_id", "memory_id", "occurred_at"]
    return [*fields, TEXT_FIELD[kind], "window_vector"] if kind == "turn" else fields


def _knn_clause(
    tenant: str, threads: Sequence[str], vector: Sequence[float], k: int, kind: DocKind, said: Period | None
) -> Body:
    """The k nearest documents of the kind among the tenant's threads, said within `said` (filtered
    inside the clause, so a narrow range still yields k)."""
    return {
        "knn": {
            "vector": {
                "vector": list(vector),
                "k": k,
                "filter": {"bool": {"filter": scope_filter(tenant, threads, kind=kind, said=said)}},
            }
        }
    }


def knn_query(
    tenant: str,
    threads: Sequence[str],
    vector: Sequence[float],
    k: int,
    kind: DocKind = "memory",
    said: Period | None = None,
) -> Body:
    clause = _knn_clause(tenant, threads, vector, k, kind, said)
    return {"size": k, "_source": _returned(kind), "query": clause}


def nearest_words_query(
    tenant: str,
    threads: Sequence[str],
    text: str,
    vector: Sequence[float],
    k: int,
    kind: DocKind = "memory",
    said: Period | None = None,
) -> Body:
    """The k nearest documents (those `knn_query` finds) scored by their k-NN score plus their BM25:
    the k-NN clause is the bool query's `must` and the match its `should`, whose scores a bool
    query adds; the adapter takes each document's k-NN score (from `knn_query`'s answer) off again
    (`opensearch_hits.words`). Only documented constructs: OpenSearch documents a k-NN clause as a
    query or in a bool's `must` beside a filter ("Boolean post-filter"), not in filter context.

    Sent in the same `_msearch` as the k-NN and BM25 searches, so a dense hit the BM25 search did
    not rank still gets its BM25 score without a second request; a near document sharing no word
    with the query scores its k-NN score alone (BM25 0). Exact while the clause yields at most k
    documents; where it yields k per shard or segment, a near document past the k-th of them
    reads as 0 (docs/aws.md, One OpenSearch request per retrieve)."""
    return {
        "size": k,
        "_source": ["doc_id"],
        "query": {
            "bool": {
                "must": [_knn_clause(tenant, threads, vector, k, kind, said)],
                "should": [_match(text, kind)],
                "filter": scope_filter(tenant, threads, kind=kind, said=said),
            }
        },
    }


def _match(text: str, kind: DocKind) -> Body:
    return {"match": {TEXT_FIELD[kind]: {"query": text}}}


def lexical_query(
    tenant: str,
    threads: Sequence[str],
    text: str,
    k: int,
    kind: DocKind = "memory",
    said: Period | None = None,
) -> Body:
    """BM25 over the kind's text field; returns the documents' half vectors too, so a document
    found only by its words still gets its cosine to the query (fusion needs both scores)."""
    within = scope_filter(tenant, threads, kind=kind, said=said)
    return {
        "size": k,
        "_source": [*_returned(kind), HALF_VECTOR_FIELD],
        "query": {"bool": {"must": [_match(text, kind)], "filter": within}},
    }


def vectors_query(tenant: str, doc_ids: Sequence[str]) -> Body:
    """The full vectors of documents written before `half_vector` (a lexical hit without one);
    room for two copies of each, as a Serverless upsert may briefly leave them."""
    return {
        "size": 2 * len(doc_ids),
        "_source": ["doc_id", "vector"],
        "query": {"bool": {"filter": scope_filter(tenant, doc_ids=doc_ids)}},
    }


def copies_query(filters: list[Body], page: int, after: list[Any] | None = None) -> Body:
    """The stored copies matching `filters`, by their unique copy_id, for deletion."""
    body: Body = {
        "size": page,
        "_source": False,
        "sort": [{"copy_id": "asc"}],
        "query": {"bool": {"filter": filters}},
    }
    if after is not None:
        body["search_after"] = after
    return body


def document(doc: IndexDocument, vector: Sequence[float], copy_id: str | None = None) -> Body:
    return {
        "tenant": doc.tenant,
        "doc_id": doc.doc_id,
        "copy_id": copy_id or uuid.uuid4().hex,
        "session_uuid": doc.session_uuid,
        "thread": doc.thread,
        "kind": doc.kind,
        "memory_id": doc.memory_id or doc.doc_id,
        "source_dialog_uuids": doc.source_dialog_uuids,
        "created_at": doc.created_at.isoformat(),
        "occurred_at": doc.occurred_at.isoformat() if doc.occurred_at else None,
        **({"spoken_of": [day.isoformat() for day in doc.spoken_of]} if doc.spoken_of else {}),
        TEXT_FIELD[doc.kind]: doc.text,
        "vector": list(vector),
        HALF_VECTOR_FIELD: pack_half_text(vector),
        **({"window_vector": pack_half_text(unit_vector(doc.window_vector))} if doc.window_vector else {}),
    }


def cosine_from_score(score: float) -> float:
    """Undo the k-NN plugin's innerproduct scoring (1 + ip when ip >= 0, else 1 / (1 - ip))."""
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score if score > 0 else -1.0


def document_key(tenant: str, doc_id: str) -> str:
    """A document's `_id` where custom ids are allowed (managed domains): tenant-unique."""
    return f"{tenant.replace('#', '##')}#{doc_id}"
