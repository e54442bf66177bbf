"""Retrieve's traffic to OpenSearch, through the stub transport: one request, a `_msearch` with
every document kind's searches (k-NN, BM25, and the BM25 scores of the nearest documents)."""

from __future__ import annotations

from typing import Any

from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.adapters.encoding import pack_half_text
from memory_engine.engine import Engine
from memory_engine.models.api import RetrieveRequest
from memory_engine.usecases import retrieve
from tests.fakes.engine import fake_engine
from tests.fakes.opensearch import StubCluster, hits

TENANT = "tenant-a"
ZERO = pack_half_text([0.0] * 64)  # a stored half vector (the fake embedder's 64 dimensions)


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
        retriever = "words of the nearest" if "should" in body["query"]["bool"] else "words"
    [kind] = [clause["term"]["kind"] for clause in clauses if "kind" in clause.get("term", {})]
    return retriever, kind, body["size"]


def requests_to(cluster: StubCluster) -> list[str]:
    return [request.path.rsplit("/", 1)[-1] for request in cluster.requests]


def test_retrieve_searches_memories_and_turns_by_meaning_and_words_in_one_request() -> None:
    # Given a cluster whose dense hits are among its BM25 hits
    memory = {"doc_id": "m1", "score": 1.5, "half_vector": ZERO}
    turn = {"doc_id": "m1:0", "score": 1.5, "half_vector": ZERO, "turn_text": "Ana: apples"}
    answers = [hits([memory]), hits([memory]), hits([memory]), hits([turn]), hits([turn]), hits([turn])]
    cluster = StubCluster(msearch_answers=[answers])

    # When retrieving 5 hits
    ask(engine_on(cluster), "apples in the orchard", limit=5)

    # Then the index saw one HTTP request: a `_msearch` with the three searches of both kinds
    assert requests_to(cluster) == ["_msearch"]
    [msearch] = cluster.requests
    headers, searches = msearch.bodies[0::2], msearch.bodies[1::2]
    assert msearch.path == "/memories/_msearch" and headers == [{}] * 6
    # And each kind asks for its own number of candidates (retrieval config: 30 memories, 60 turns)
    assert [search_of(body) for body in searches] == [
        ("knn", "memory", 30),
        ("words", "memory", 30),
        ("words of the nearest", "memory", 30),
        ("knn", "turn", 60),
        ("words", "turn", 60),
        ("words of the nearest", "turn", 60),
    ]


def test_dense_hits_the_words_missed_need_no_second_request() -> None:
    # Given dense hits of both kinds that the BM25 searches did not rank, one sharing a word
    answers = [
        hits([{"doc_id": "m1"}]),
        hits([]),
        hits([{"doc_id": "m1", "score": 0.5}]),
        hits([{"doc_id": "m2:0"}]),
        hits([]),
        hits([]),
    ]
    cluster = StubCluster(msearch_answers=[answers])

    # When retrieving
    ask(engine_on(cluster), "apples in the orchard")

    # Then their BM25 scores came with the first and only request
    assert requests_to(cluster) == ["_msearch"]


def test_turn_hits_from_opensearch_carry_the_speaker_match_as_local_ones_do() -> None:
    # Given OpenSearch turn hits said by Ana and by Ben (their text comes back in `_source`)
    memories = [{"doc_id": f"m{n}", "score": 1.0, "half_vector": ZERO} for n in (1, 2)]
    turns = [
        {"doc_id": "m1:0", "score": 1.0, "half_vector": ZERO, "turn_text": "Ana: I picked apples"},
        {"doc_id": "m2:0", "score": 1.0, "half_vector": ZERO, "turn_text": "Ben: I picked apples"},
    ]
    answers = [hits(memories), hits(memories), hits(memories), hits(turns), hits(turns), hits(turns)]
    engine = engine_on(StubCluster(msearch_answers=[answers]))
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": "What did Ana pick?"}}
    )

    # When retrieve gathers its candidates
    gathered = retrieve.gather(engine, TENANT, request)

    # Then only Ana's line is marked as said by the person the question names
    assert {turn.key: turn.features["speaker"] for turn in gathered.turns} == {"m1:0": 1.0, "m2:0": 0.0}
