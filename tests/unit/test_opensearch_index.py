"""The OpenSearch adapter's mapping and request bodies, through a stub transport (no cluster here;
the index contract suite runs against a real one when OPENSEARCH_URL is set)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest

from memory_engine.adapters.aws import opensearch_bodies as bodies
from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.adapters.encoding import pack_half_text, unpack_half_text
from memory_engine.errors import InvalidInput, Unavailable
from memory_engine.ports import IndexDocument, IndexHit
from tests.fakes.opensearch import StubCluster, hits

TENANT = "tenant-a"


def index_on(cluster: StubCluster, **options: Any) -> OpenSearchIndex:
    settings: dict[str, Any] = {"url": "https://stub", "dimension": 4, "service": "aoss"} | options
    return OpenSearchIndex(client=cluster.client(), **settings)


def doc(doc_id: str, vector: list[float] | None = None, tenant: str = TENANT) -> IndexDocument:
    return IndexDocument(
        tenant=tenant,
        doc_id=doc_id,
        session_uuid="s1",
        thread="thread-1",
        text=f"words of {doc_id}",
        vector=vector or [3.0, 0.0, 4.0, 0.0],
        source_dialog_uuids=["d1"],
        created_at=datetime(2026, 3, 18, tzinfo=UTC),
    )


def tenant_filtered(query: dict[str, Any], tenant: str = TENANT) -> bool:
    """True when the query's filter clauses include the tenant term."""
    if "knn" in query:
        clauses = next(iter(query["knn"].values()))["filter"]["bool"]["filter"]
    else:
        clauses = query["bool"]["filter"]
    return {"term": {"tenant": tenant}} in clauses


# -- the mapping -------------------------------------------------------------------------------


def test_create_index_sends_a_knn_mapping_with_the_configured_dimension_and_engine() -> None:
    # Given no index yet
    cluster = StubCluster(index_exists=False)

    # When the bootstrap command creates it for 4096-dimensional lucene vectors
    created = index_on(cluster, dimension=4096, engine="lucene", index="mem").create_index()

    # Then one PUT carries an HNSW knn_vector of that dimension, and k-NN is on for the index
    assert created is True
    [put] = [r for r in cluster.requests if r.method == "PUT"]
    assert put.path == "/mem"
    vector = put.body["mappings"]["properties"]["vector"]
    assert vector["type"] == "knn_vector"
    assert vector["dimension"] == 4096
    assert vector["method"]["name"] == "hnsw"
    assert vector["method"]["engine"] == "lucene"
    assert put.body["settings"]["index"]["knn"] is True


def test_the_text_field_uses_nori_by_default_and_another_analyzer_when_configured() -> None:
    nori, cjk = StubCluster(), StubCluster()

    index_on(nori).create_index()
    index_on(cjk, analyzer="cjk").create_index()

    nori_body = next(r for r in nori.requests if r.method == "PUT").body
    cjk_body = next(r for r in cjk.requests if r.method == "PUT").body
    assert nori_body["mappings"]["properties"]["text"]["analyzer"] == "memory_text"
    assert nori_body["settings"]["analysis"]["tokenizer"]["memory_nori"]["type"] == "nori_tokenizer"
    assert cjk_body["settings"]["analysis"]["analyzer"]["memory_text"] == {"type": "cjk"}


def test_an_existing_index_is_kept_unless_recreate_is_asked_and_gets_the_fields_added_since() -> None:
    cluster = StubCluster(index_exists=True)

    assert index_on(cluster).create_index() is False
    assert [r.method for r in cluster.requests] == ["HEAD", "PUT"]
    mapping = cluster.requests[1]
    assert mapping.path.endswith("/_mapping")
    assert mapping.body == {
        "properties": {
            "occurred_at": {"type": "date"},
            "spoken_of": {"type": "date"},
            "window_vector": {"type": "binary"},
            "half_vector": {"type": "binary"},
        }
    }


def test_nothing_is_sent_before_the_first_call() -> None:
    cluster = StubCluster()

    index_on(cluster)

    assert cluster.requests == []


# -- search bodies ----------------------------------------------------------------------------


def test_search_filters_by_tenant_and_threads_inside_the_knn_clause_with_k_as_size() -> None:
    # Given an index answering its three searches with nothing
    cluster = StubCluster(msearch_answers=[[hits([]), hits([]), hits([])]])

    # When searching two threads for 7 candidates
    index_on(cluster).search(TENANT, ["thread-1", "thread-2"], "apples", [0.0, 2.0, 0.0, 0.0], k=7)

    # Then the k-NN query carries the filter inside its knn clause, with size and k both 7
    [msearch] = cluster.sent("_msearch")
    knn, lexical = msearch.bodies[1], msearch.bodies[3]
    # Both ask for memory documents only (turn documents are searched with kind="turn")
    clause = knn["query"]["knn"]["vector"]
    assert (knn["size"], clause["k"]) == (7, 7)
    assert clause["filter"]["bool"]["filter"] == [
        {"term": {"tenant": TENANT}},
        {"terms": {"thread": ["thread-1", "thread-2"]}},
        {"term": {"kind": "memory"}},
    ]
    assert "post_filter" not in knn and set(knn["query"]) == {"knn"}
    # And the query vector is sent unit length (innerproduct on unit vectors is the cosine)
    assert clause["vector"] == [0.0, 1.0, 0.0, 0.0]
    # And the BM25 query has the same size and the same tenant and thread filters
    assert lexical["size"] == 7
    assert tenant_filtered(lexical["query"])
    assert lexical["query"]["bool"]["must"] == [{"match": {"text": {"query": "apples"}}}]
    # And the BM25 of the nearest: that very k-NN clause as the bool query's `must`, the same match
    # as its `should` (scores added), tenant-filtered itself as well
    nearest = msearch.bodies[5]
    assert nearest["size"] == 7 and nearest["_source"] == ["doc_id"]
    assert nearest["query"]["bool"]["must"] == [knn["query"]]
    assert nearest["query"]["bool"]["should"] == lexical["query"]["bool"]["must"]
    assert tenant_filtered(nearest["query"])
    # And the index is named by the path alone, where the IAM grants look (`<index>/*`)
    assert msearch.path == "/memories/_msearch"
    assert msearch.bodies[0::2] == [{}, {}, {}]


def test_search_turns_scores_into_cosines_and_bm25_with_both_for_every_hit_in_one_request() -> None:
    # Given a dense hit (innerproduct score 1.8 = cosine 0.8) the BM25 search did not rank, a
    # lexical-only hit with its half vector, and the nearest documents' k-NN score plus BM25 (1.25)
    cluster = StubCluster(
        msearch_answers=[
            [
                hits([{"doc_id": "near", "score": 1.8}]),
                hits([{"doc_id": "worded", "score": 3.5, "half_vector": pack_half_text([0.6, 0.8, 0, 0])}]),
                hits([{"doc_id": "near", "score": 3.05}]),
            ]
        ]
    )

    # When searching
    found = index_on(cluster).search(TENANT, ["thread-1"], "apples", [1.0, 0.0, 0.0, 0.0], k=5)

    # Then each hit carries both scores: the dense-only one its BM25 from the nearest documents'
    # search, the lexical-only one its cosine from its vector; and one request asked for all of it
    assert [(hit.doc_id, round(hit.dense, 3), round(hit.lexical, 6)) for hit in found] == [
        ("near", 0.8, 1.25),
        ("worded", 0.6, 3.5),
    ]
    assert len(cluster.requests) == 1
    # And the lexical search asks for the compact copy of each vector, not the k-NN field's numbers
    lexical = cluster.sent("_msearch")[0].bodies[3]
    assert "half_vector" in lexical["_source"] and "vector" not in lexical["_source"]


def test_a_lexical_hit_written_before_half_vectors_gets_its_cosine_from_one_more_search() -> None:
    # Given lexical hits from before half vectors: one the k-NN search also found, one it did not
    cluster = StubCluster(
        msearch_answers=[
            [
                hits([{"doc_id": "near", "score": 1.8}]),
                hits([{"doc_id": "near", "score": 2.0}, {"doc_id": "old", "score": 3.0}]),
                hits([{"doc_id": "near", "score": 2.0}]),
            ],
            [hits([{"doc_id": "old", "vector": [0.0, 0.6, 0.8, 0.0]}])],
        ]
    )

    # When searching
    found = index_on(cluster).search(TENANT, ["thread-1"], "apples", [0.0, 0.0, 2.0, 0.0], k=5)

    # Then one more search, in the tenant, reads the full vector of the one the k-NN search missed
    follow_up = cluster.sent("_msearch")[1].bodies[1]
    assert follow_up["_source"] == ["doc_id", "vector"]
    assert follow_up["query"]["bool"]["filter"] == [
        {"term": {"tenant": TENANT}},
        {"terms": {"doc_id": ["old"]}},
    ]
    # And each hit has its cosine: from the k-NN score, or from the vector read back
    assert {hit.doc_id: round(hit.dense, 6) for hit in found} == {"near": 0.8, "old": 0.8}


def test_a_dense_hit_sharing_no_word_with_the_query_has_a_bm25_of_zero() -> None:
    # Given a nearest document whose words-of-the-nearest score is its k-NN score alone
    near = hits([{"doc_id": "near", "score": 1.8}])
    cluster = StubCluster(msearch_answers=[[near, hits([]), near]])

    found = index_on(cluster).search(TENANT, ["thread-1"], "apples", [1.0, 0.0, 0.0, 0.0], k=5)

    assert [(hit.doc_id, hit.lexical) for hit in found] == [("near", 0.0)]


def test_a_words_of_the_nearest_hit_the_knn_search_did_not_return_gets_no_bm25_from_it() -> None:
    # Given a document in the words-of-the-nearest answer only (a clause yielding k per shard)
    answers = [hits([{"doc_id": "near", "score": 1.8}]), hits([]), hits([{"doc_id": "other", "score": 4.0}])]
    cluster = StubCluster(msearch_answers=[answers])

    found = index_on(cluster).search(TENANT, ["thread-1"], "apples", [1.0, 0.0, 0.0, 0.0], k=5)

    # Then it is no candidate (its k-NN score, to take off, is unknown), and the dense hit keeps 0
    assert [(hit.doc_id, hit.lexical) for hit in found] == [("near", 0.0)]


def test_hits_bring_back_when_their_document_was_said_and_none_for_older_documents() -> None:
    said = "2023-05-08T13:56:00+00:00"
    cluster = StubCluster(
        msearch_answers=[
            [
                hits([{"doc_id": "near", "score": 1.8, "occurred_at": said}]),
                hits(
                    [
                        {"doc_id": "near", "score": 2.0},
                        {"doc_id": "old", "score": 1.0, "half_vector": pack_half_text([1, 0, 0, 0])},
                    ]
                ),
                hits([{"doc_id": "near", "score": 2.0}]),
            ]
        ]
    )

    found = index_on(cluster).search(TENANT, ["thread-1"], "apples", [1.0, 0.0, 0.0, 0.0], k=5, kind="turn")

    assert [(hit.doc_id, hit.occurred_at) for hit in found] == [
        ("near", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("old", None),
    ]
    knn, lexical = cluster.sent("_msearch")[0].bodies[1], cluster.sent("_msearch")[0].bodies[3]
    assert "occurred_at" in knn["_source"] and "occurred_at" in lexical["_source"]


def test_a_negative_inner_product_score_maps_back_to_a_negative_cosine() -> None:
    cluster = StubCluster(msearch_answers=[[hits([{"doc_id": "away", "score": 0.5}])]])

    found = index_on(cluster).search(TENANT, ["thread-1"], "", [1.0, 0.0, 0.0, 0.0], k=5)

    assert found == [IndexHit(doc_id="away", dense=-1.0, lexical=0.0)]


def test_duplicate_copies_of_a_document_come_back_as_one_hit() -> None:
    cluster = StubCluster(
        msearch_answers=[[hits([{"doc_id": "a", "score": 1.9}, {"doc_id": "a", "score": 1.7}])]]
    )

    found = index_on(cluster).search(TENANT, ["thread-1"], "", [1.0, 0.0, 0.0, 0.0], k=5)

    assert [hit.doc_id for hit in found] == ["a"]


def test_no_threads_or_no_k_sends_nothing() -> None:
    cluster = StubCluster()
    index = index_on(cluster)

    assert index.search(TENANT, [], "apples", [1.0, 0.0, 0.0, 0.0], k=5) == []
    assert index.search(TENANT, ["thread-1"], "apples", [1.0, 0.0, 0.0, 0.0], k=0) == []
    assert cluster.requests == []


def test_a_query_vector_of_another_dimension_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="4"):
        index_on(StubCluster()).search(TENANT, ["thread-1"], "x", [1.0, 0.0], k=5)


# -- writes -----------------------------------------------------------------------------------


def test_on_a_managed_domain_upsert_indexes_under_a_tenant_unique_id_and_refreshes_when_asked() -> None:
    cluster = StubCluster()

    index_on(cluster, service="es", refresh=True).upsert([doc("m1"), doc("m1", tenant="tenant-b")])

    [bulk] = cluster.sent("_bulk")
    actions = bulk.bodies[0::2]
    assert [a["index"]["_id"] for a in actions] == ["tenant-a#m1", "tenant-b#m1"]
    assert bulk.bodies[1]["vector"] == [0.6, 0.0, 0.8, 0.0]  # normalised on the way in
    assert bulk.params.get("refresh") == "true"


def test_on_serverless_upsert_uses_generated_ids_and_replaces_older_copies_of_the_tenants_doc() -> None:
    # Given an older copy of m1 stored under a generated id
    cluster = StubCluster(search_answers=[hits([{"_id": "gen-1", "doc_id": "m1"}])])

    # When m1 is upserted again
    index_on(cluster, service="aoss", refresh=True).upsert([doc("m1")])

    # Then the copies were looked up within the tenant, and one bulk deletes the old and indexes the new
    [lookup] = cluster.sent("_search")
    assert lookup.body["query"]["bool"]["filter"] == [
        {"term": {"tenant": TENANT}},
        {"terms": {"doc_id": ["m1"]}},
    ]
    [bulk] = cluster.sent("_bulk")
    assert bulk.bodies[0] == {"delete": {"_id": "gen-1"}}
    assert bulk.bodies[1] == {"index": {}}
    assert "refresh" not in bulk.params  # Serverless has no refresh


def test_deleting_by_memory_id_and_clearing_a_tenant_always_filter_by_tenant() -> None:
    cluster = StubCluster()
    index = index_on(cluster)

    index.delete(TENANT, ["m1", "m2"])
    index.clear(TENANT)

    lookups = [request.body["query"]["bool"]["filter"] for request in cluster.sent("_search")]
    # Deleting a memory also deletes its turn documents (they name it in memory_id).
    either = [{"terms": {"doc_id": ["m1", "m2"]}}, {"terms": {"memory_id": ["m1", "m2"]}}]
    assert lookups == [
        [{"term": {"tenant": TENANT}}, {"bool": {"should": either, "minimum_should_match": 1}}],
        [{"term": {"tenant": TENANT}}],
    ]


def test_a_vector_of_the_wrong_dimension_is_refused_before_anything_is_sent() -> None:
    cluster = StubCluster()

    with pytest.raises(InvalidInput, match="m1"):
        index_on(cluster).upsert([doc("m1", vector=[1.0, 0.0])])

    assert cluster.requests == []


def test_a_bulk_action_the_cluster_refuses_is_unavailable_not_silently_dropped() -> None:
    refused = {"errors": True, "items": [{"index": {"status": 429, "error": {"type": "too_many_requests"}}}]}
    cluster = StubCluster(bulk_answer=refused)

    with pytest.raises(Unavailable, match="too_many_requests"):
        index_on(cluster, service="es").upsert([doc("m1")])


def test_turn_documents_are_searched_apart_in_their_own_text_field_and_name_their_memory() -> None:
    # Given an index whose k-NN search finds one turn document of memory m1
    turn_hit = {"_id": "x", "score": 1.5, "doc_id": "m1:3"}
    cluster = StubCluster(msearch_answers=[[hits([turn_hit]), hits([]), hits([])]])

    # When turn documents are searched
    found = index_on(cluster).search(TENANT, ["thread-1"], "apples", [0.0, 1.0, 0.0, 0.0], k=3, kind="turn")

    # Then both queries ask for turn documents, BM25 over the turn text field only
    knn, lexical = cluster.sent("_msearch")[0].bodies[1], cluster.sent("_msearch")[0].bodies[3]
    assert {"term": {"kind": "turn"}} in knn["query"]["knn"]["vector"]["filter"]["bool"]["filter"]
    assert lexical["query"]["bool"]["must"] == [{"match": {"turn_text": {"query": "apples"}}}]
    nearest = cluster.sent("_msearch")[0].bodies[5]
    assert nearest["query"]["bool"]["should"] == lexical["query"]["bool"]["must"]
    assert {"term": {"kind": "turn"}} in nearest["query"]["bool"]["filter"]
    # And the hit names the memory it belongs to
    assert [(hit.doc_id, hit.memory_id) for hit in found] == [("m1:3", "m1")]


def test_turn_hits_bring_back_their_text_for_the_hits_evidence() -> None:
    # Given a turn document found by words and another by meaning
    said = "Ana: apples\n8 May 2023"
    half = pack_half_text([0, 1, 0, 0])
    by_words = {"doc_id": "m1:0", "score": 2.0, "turn_text": said, "half_vector": half}
    by_meaning = {"doc_id": "m1:1", "score": 1.5, "turn_text": "Ben: pears"}
    cluster = StubCluster(msearch_answers=[[hits([by_meaning]), hits([by_words]), hits([])]])

    # When turn documents are searched
    found = index_on(cluster).search(TENANT, ["thread-1"], "apples", [0.0, 1.0, 0.0, 0.0], k=3, kind="turn")

    # Then both queries ask for the turn text, and each hit carries it
    knn, lexical = cluster.sent("_msearch")[0].bodies[1], cluster.sent("_msearch")[0].bodies[3]
    assert "turn_text" in knn["_source"] and "turn_text" in lexical["_source"]
    assert {hit.doc_id: hit.text for hit in found} == {"m1:1": "Ben: pears", "m1:0": said}


def test_turn_hits_carry_their_window_cosine_computed_from_the_returned_window_vector() -> None:
    # Given a turn found by meaning and one by words, each with a window vector, and one without
    by_meaning = {"doc_id": "m1:0", "score": 1.5, "window_vector": pack_half_text([0.6, 0.8, 0.0, 0.0])}
    by_words = {
        "doc_id": "m1:1",
        "score": 2.0,
        "half_vector": pack_half_text([0, 1, 0, 0]),
        "window_vector": pack_half_text([0.0, 0.0, 1.0, 0.0]),
    }
    bare = {"doc_id": "m2:0", "score": 1.0, "half_vector": pack_half_text([0, 1, 0, 0])}
    cluster = StubCluster(msearch_answers=[[hits([by_meaning]), hits([by_words, bare]), hits([])]])

    # When turn documents are searched
    found = index_on(cluster).search(TENANT, ["thread-1"], "apples", [0.0, 2.0, 0.0, 0.0], k=3, kind="turn")

    # Then both turn queries ask for the window vector, and each hit has the query's cosine to it
    knn, lexical = cluster.sent("_msearch")[0].bodies[1], cluster.sent("_msearch")[0].bodies[3]
    assert "window_vector" in knn["_source"] and "window_vector" in lexical["_source"]
    windows = {hit.doc_id: hit.window for hit in found}
    assert windows == {"m1:0": pytest.approx(0.8, abs=1e-3), "m1:1": pytest.approx(0.0), "m2:0": None}


def test_a_document_is_stored_with_a_half_copy_of_its_unit_vector() -> None:
    cluster = StubCluster()

    index_on(cluster).upsert([doc("m1", vector=[3.0, 0.0, 4.0, 0.0])])

    stored = cluster.sent("_bulk")[0].bodies[1]
    assert unpack_half_text(stored["half_vector"]) == pytest.approx([0.6, 0.0, 0.8, 0.0], abs=1e-3)
    mapping = bodies.index_body(4)["mappings"]["properties"]
    assert mapping["half_vector"] == {"type": "binary"}


def test_a_turn_document_is_stored_with_its_window_vector_unit_length() -> None:
    cluster = StubCluster()
    turn = doc("m1:0").model_copy(
        update={"kind": "turn", "memory_id": "m1", "window_vector": [0, 3.0, 0, 4.0]}
    )

    index_on(cluster, service="es").upsert([turn, doc("m1")])

    [bulk] = cluster.sent("_bulk")
    # (base64 float16: 4 characters per 3 bytes, read back within float16's precision)
    assert unpack_half_text(bulk.bodies[1]["window_vector"]) == pytest.approx([0.0, 0.6, 0.0, 0.8], abs=1e-3)
    assert "window_vector" not in bulk.bodies[3]


def test_a_window_vector_of_the_wrong_dimension_is_refused_before_anything_is_sent() -> None:
    cluster = StubCluster()
    turn = doc("m1:0").model_copy(update={"kind": "turn", "memory_id": "m1", "window_vector": [1.0, 0.0]})

    with pytest.raises(InvalidInput, match="m1:0"):
        index_on(cluster, service="es").upsert([turn])

    assert cluster.requests == []


def test_memory_searches_do_not_bring_back_the_memory_text() -> None:
    cluster = StubCluster(msearch_answers=[[hits([]), hits([]), hits([])]])

    index_on(cluster).search(TENANT, ["thread-1"], "apples", [0.0, 1.0, 0.0, 0.0], k=3)

    knn, lexical = cluster.sent("_msearch")[0].bodies[1], cluster.sent("_msearch")[0].bodies[3]
    assert "text" not in knn["_source"] and "text" not in lexical["_source"]


def test_a_turn_document_is_stored_with_its_kind_memory_and_turn_text() -> None:
    cluster = StubCluster()
    turn = doc("m1:0").model_copy(update={"kind": "turn", "memory_id": "m1", "text": "Alex: hello"})

    index_on(cluster, service="es").upsert([turn])

    [bulk] = cluster.sent("_bulk")
    stored = bulk.bodies[1]
    assert (stored["kind"], stored["memory_id"], stored["turn_text"]) == ("turn", "m1", "Alex: hello")
    assert "text" not in stored


def test_a_document_is_stored_with_when_it_was_said() -> None:
    cluster = StubCluster()
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)

    index_on(cluster, service="es").upsert([doc("m1").model_copy(update={"occurred_at": said}), doc("fact")])

    [bulk] = cluster.sent("_bulk")
    assert [bulk.bodies[1]["occurred_at"], bulk.bodies[3]["occurred_at"]] == [said.isoformat(), None]


# -- failures: the caller's message names no endpoint or index, the log does -----------------------

PRIVATE_URL = "https://search-private-domain-x7q.eu-west-1.es.amazonaws.com"
PRIVATE_INDEX = "acme-private-memories"


class FailingClient:
    """An opensearch-py client whose every search raises `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def msearch(self, **_: Any) -> Any:
        raise self.error


def opensearch_failures() -> dict[str, Any]:
    from opensearchpy.exceptions import ConnectionError, NotFoundError, TransportError

    reason = {"error": {"type": "index_not_found_exception", "index": PRIVATE_INDEX}}
    refused = {"type": "es_rejected_execution_exception", "reason": f"rejected on [{PRIVATE_INDEX}]"}
    return {
        "missing index": FailingClient(NotFoundError(404, "index_not_found_exception", reason)),
        "unreachable": FailingClient(ConnectionError("N/A", f"refused by {PRIVATE_URL}", OSError())),
        "overloaded": FailingClient(TransportError(503, f"{PRIVATE_INDEX} overloaded", {})),
        "search refused": StubCluster(msearch_answers=[[{"error": refused, "status": 429}]]).client(),
    }


@pytest.mark.parametrize("failure", sorted(opensearch_failures()))
def test_an_opensearch_failure_is_unavailable_naming_neither_endpoint_nor_index_except_in_the_log(
    failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Given an index on a private endpoint whose cluster fails this way
    index = OpenSearchIndex(
        url=PRIVATE_URL, index=PRIVATE_INDEX, dimension=4, client=opensearch_failures()[failure]
    )

    # When a search reaches it
    with caplog.at_level(logging.WARNING, "memory_engine.aws"), pytest.raises(Unavailable) as raised:
        index.search(TENANT, ["thread-1"], "gardens", [1.0, 0.0, 0.0, 0.0], k=3)

    # Then the caller's message names OpenSearch and what to do, and only the log names the resource
    message = raised.value.message
    assert "OpenSearch" in message and ("retry" in message or "create-index" in message)
    assert PRIVATE_URL not in message and PRIVATE_INDEX not in message
    assert [record.resource for record in caplog.records] == [  # type: ignore[attr-defined]
        f"{PRIVATE_URL} index {PRIVATE_INDEX}"
    ]


def test_a_refused_bulk_action_names_the_error_type_but_not_its_reason_or_the_index(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reason = f"index [{PRIVATE_INDEX}] blocked by: [FORBIDDEN/8/index write (api)]"
    refused = {"index": {"status": 403, "error": {"type": "cluster_block_exception", "reason": reason}}}
    cluster = StubCluster(bulk_answer={"errors": True, "items": [refused]})
    index = index_on(cluster, service="es", index=PRIVATE_INDEX, url=PRIVATE_URL)

    with caplog.at_level(logging.WARNING, "memory_engine.aws"), pytest.raises(Unavailable) as raised:
        index.upsert([doc("m1")])

    assert "cluster_block_exception" in raised.value.message
    assert PRIVATE_INDEX not in raised.value.message and "blocked" not in raised.value.message
    # The log names the index and, outside debug logging, the type only: a reason may quote a document
    [record] = caplog.records
    assert (record.resource, record.error) == (  # type: ignore[attr-defined]
        f"{PRIVATE_URL} index {PRIVATE_INDEX}",
        "cluster_block_exception",
    )
