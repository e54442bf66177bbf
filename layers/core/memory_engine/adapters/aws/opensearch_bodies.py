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

from memory_engine.ports import IndexDocument

Engine = Literal["faiss", "lucene"]
Analyzer = Literal["nori", "cjk", "standard"]
Body = dict[str, Any]

TEXT_ANALYZER = "memory_text"
# HNSW graph parameters: OpenSearch's defaults, explicit so a reindex rebuilds the same graph.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128


def analysis(analyzer: Analyzer) -> Body:
    """The `memory_text` analyzer: nori (Korean morphology; Latin words stay words) where the
    analysis-nori plugin exists (Amazon OpenSearch Service and Serverless have it), else `cjk`
    (bigrams for Hangul/Han/Kana, lower-cased English) or plain `standard`."""
    if analyzer == "nori":
        return {
            "tokenizer": {"memory_nori": {"type": "nori_tokenizer", "decompound_mode": "mixed"}},
            "analyzer": {
                TEXT_ANALYZER: {"type": "custom", "tokenizer": "memory_nori", "filter": ["lowercase"]}
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
                "source_dialog_uuids": keyword,
                "created_at": {"type": "date"},
                "text": {"type": "text", "analyzer": TEXT_ANALYZER},
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
    tenant: str, threads: Sequence[str] | None = None, doc_ids: Sequence[str] | None = None
) -> list[Body]:
    """The filter clauses of every query: always the tenant, then the threads or documents asked."""
    clauses: list[Body] = [{"term": {"tenant": tenant}}]
    if threads is not None:
        clauses.append({"terms": {"thread": list(threads)}})
    if doc_ids is not None:
        clauses.append({"terms": {"doc_id": list(doc_ids)}})
    return clauses


def knn_query(tenant: str, threads: Sequence[str], vector: Sequence[float], k: int) -> Body:
    return {
        "size": k,
        "_source": ["doc_id"],
        "query": {
            "knn": {
                "vector": {
                    "vector": list(vector),
                    "k": k,
                    "filter": {"bool": {"filter": scope_filter(tenant, threads)}},
                }
            }
        },
    }


def lexical_query(
    tenant: str, threads: Sequence[str], text: str, k: int, doc_ids: Sequence[str] | None = None
) -> Body:
    """BM25 over `text`; returns the vectors too, so a document found only by its words still gets
    its cosine to the query (fusion needs both scores)."""
    return {
        "size": k,
        "_source": ["doc_id", "vector"],
        "query": {
            "bool": {
                "must": [{"match": {"text": {"query": text}}}],
                "filter": scope_filter(tenant, threads, doc_ids),
            }
        },
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
        "source_dialog_uuids": doc.source_dialog_uuids,
        "created_at": doc.created_at.isoformat(),
        "text": doc.text,
        "vector": list(vector),
    }


def cosine_from_score(score: float) -> float:
    """Undo the k-NN plugin's innerproduct scoring (1 + ip when ip >= 0, else 1 / (1 - ip))."""
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score if score > 0 else -1.0


def document_key(tenant: str, doc_id: str) -> str:
    """A document's `_id` where custom ids are allowed (managed domains): tenant-unique."""
    return f"{tenant.replace('#', '##')}#{doc_id}"
