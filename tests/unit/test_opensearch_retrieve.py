"""Retrieve's traffic to OpenSearch, through the stub transport: every document kind in one
`_msearch`, and one more only for the BM25 scores of dense hits the words did not find."""

from __future__ import annotations

from typing import Any

from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.engine import Engine
from memory_engine.models.api import RetrieveRequest
from memory_engine.usecases import retrieve
from tests.fakes.engine import fake_engine
from tests.fakes.opensearch import StubCluster, hits

TENANT = "tenant-a"


def engine_on(cluster: StubCluster) -> Engine:
    engine = fake_engine()
    engine.index = OpenSearchIndex(
        "https://stub", dimension=engine.embedder.dimension, service="aoss", client=cluster.client()
    )
    return engine


def ask(engine: Engine, query: str, limit: int = 5) -> None:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": query}, "options": {"limit": limit}}
    )
    retrieve.run(engine, TENANT, request)


def search_of(body: dict[str, Any]) -> tuple[str, str, int]:
    """(retriever, kind, size) of one search body."""
    if "knn" in body["query"]:
        clauses = body["query"]["knn"]["vector"]["filter"]["bool"]["filter"]
        retriever = "knn"
    else:
        clauses = body["query"]["bool"]["filter"]
        retriever = "words"
    [kind] = [clause["term"]["kind"] for clause in clauses if "kind" in clause.get("term", {})]
    return retriever, kind, body["size"]


def test_retrieve_searches_memories_and_turns_by_meaning_and_words_in_one_msearch() -> None:
    # Given a cluster whose dense hits are among its BM25 hits (nothing left to rescore)
    memory = {"doc_id": "m1", "score": 1.5, "vector": [0.0] * 64}
    turn = {"doc_id": "m1:0", "score": 1.5, "vector": [0.0] * 64, "turn_text": "Ana: apples"}
    cluster = StubCluster(msearch_answers=[[hits([memory]), hits([memory]), hits([turn]), hits([turn])]])

    # When retrieving 5 hits
    ask(engine_on(cluster), "apples in the orchard", limit=5)

    # Then the index saw one HTTP request: a `_msearch` with both searches of both kinds
    assert [request.path.rsplit("/", 1)[-1] for request in cluster.requests] == ["_msearch"]
    [msearch] = cluster.requests
    headers, searches = msearch.bodies[0::2], msearch.bodies[1::2]
    assert headers == [{"index": "memories"}] * 4
    # And each kind asks for its own number of candidates (retrieval config: 50 memories, 200 turns)
    assert [search_of(body) for body in searches] == [
        ("knn", "memory", 50),
        ("words", "memory", 50),
        ("knn", "turn", 200),
        ("words", "turn", 200),
    ]


def test_dense_hits_the_words_missed_get_their_bm25_in_one_more_msearch_for_every_kind() -> None:
    # Given dense hits of both kinds that the BM25 searches did not return
    cluster = StubCluster(
        msearch_answers=[
            [hits([{"doc_id": "m1"}]), hits([]), hits([{"doc_id": "m2:0"}]), hits([])],
            [hits([{"doc_id": "m1", "score": 0.5}]), hits([])],
        ]
    )

    # When retrieving
    ask(engine_on(cluster), "apples in the orchard")

    # Then a second `_msearch` asks for both kinds' missing BM25 scores, each limited to its hits
    assert [request.path.rsplit("/", 1)[-1] for request in cluster.requests] == ["_msearch"] * 2
    rescores = cluster.requests[1].bodies[1::2]
    assert [search_of(body) for body in rescores] == [("words", "memory", 1), ("words", "turn", 1)]
    assert {"terms": {"doc_id": ["m1"]}} in rescores[0]["query"]["bool"]["filter"]
    assert {"terms": {"doc_id": ["m2:0"]}} in rescores[1]["query"]["bool"]["filter"]
