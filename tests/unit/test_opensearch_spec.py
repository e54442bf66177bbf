"""Every request the OpenSearch adapter sends, checked against OpenSearch's own API specification
(a copy in tests/opensearch_spec/): its method and path are an operation of the spec, and its
body (each line of an msearch or bulk body) matches that operation's schemas, closed to keys the
spec does not name (tests/fakes/opensearch_spec.py). No OpenSearch engine installs here, so this
and the stub transport are what stand between a body and a cluster's 400."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest

from memory_engine.adapters.aws import opensearch_bodies as bodies
from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.adapters.encoding import pack_half_text
from memory_engine.ports import DocKind, IndexDocument, Period
from tests.fakes.opensearch import Request, StubCluster, hits
from tests.fakes.opensearch_spec import spec

TENANT = "tenant-a"
QUERY = [0.5, 0.5, 0.5, 0.5]


def index_on(cluster: StubCluster, **options: Any) -> OpenSearchIndex:
    settings: dict[str, Any] = {"url": "https://stub", "dimension": 4, "service": "aoss"} | options
    return OpenSearchIndex(client=cluster.client(), **settings)


def documents() -> list[IndexDocument]:
    when = datetime(2026, 3, 18, tzinfo=UTC)
    common: dict[str, Any] = {
        "tenant": TENANT,
        "session_uuid": "s1",
        "thread": "thread-1",
        "vector": [3.0, 0.0, 4.0, 0.0],
        "source_dialog_uuids": ["d1"],
        "created_at": when,
    }
    return [
        # "yesterday" resolved at write: the day it speaks of
        IndexDocument(
            doc_id="m1",
            text="Ana picked apples yesterday",
            occurred_at=when,
            spoken_of=[when - timedelta(days=1)],
            **common,
        ),
        IndexDocument(
            doc_id="m1:0",
            text="Ana: I picked apples",
            kind="turn",
            memory_id="m1",
            window_vector=[0.0, 1.0, 0.0, 0.0],
            **common,
        ),
        IndexDocument(doc_id="fact-1", text="allergic to peanuts", **common),  # a fact: no date
    ]


STORED = [{"_id": "copy-1", "doc_id": "m1"}]
HALF = pack_half_text([1.0, 0.0, 0.0, 0.0])

# What the adapter does, each on a fresh stub cluster holding one stored copy: every operation it
# has, every variant of its bodies (analyzers, engines, services, kinds of search).
USES: dict[str, Callable[[StubCluster], object]] = {}


def use(name: str) -> Callable[[Callable[[StubCluster], object]], Callable[[StubCluster], object]]:
    def register(run: Callable[[StubCluster], object]) -> Callable[[StubCluster], object]:
        USES[name] = run
        return run

    return register


@use("create the index: nori, faiss")
def _create_nori(cluster: StubCluster) -> None:
    index_on(cluster).create_index()


@use("create the index: cjk, lucene")
def _create_cjk(cluster: StubCluster) -> None:
    index_on(cluster, analyzer="cjk", engine="lucene").create_index()


@use("create the index: standard, 4096 dimensions")
def _create_standard(cluster: StubCluster) -> None:
    index_on(cluster, analyzer="standard", dimension=4096).create_index()


@use("add the fields added since to an existing index")
def _add_fields(cluster: StubCluster) -> None:
    cluster.index_exists = True
    index_on(cluster).create_index()


@use("recreate the index")
def _recreate(cluster: StubCluster) -> None:
    cluster.index_exists = True
    index_on(cluster).create_index(recreate=True)


@use("upsert on Serverless: older copies deleted, generated ids")
def _upsert_serverless(cluster: StubCluster) -> None:
    index_on(cluster).upsert(documents())


@use("upsert on a managed domain: tenant-unique ids, refreshed")
def _upsert_domain(cluster: StubCluster) -> None:
    index_on(cluster, service="es", refresh=True).upsert(documents())


@use("delete memories with their turns")
def _delete(cluster: StubCluster) -> None:
    index_on(cluster).delete(TENANT, ["m1", "m2"])


@use("clear a tenant")
def _clear_tenant(cluster: StubCluster) -> None:
    index_on(cluster).clear(TENANT)


@use("clear every tenant")
def _clear_all(cluster: StubCluster) -> None:
    index_on(cluster).clear()


@use("search memories and turns by meaning and by words")
def _search_both(cluster: StubCluster) -> None:
    kinds: dict[DocKind, int] = {"memory": 5, "turn": 9}
    index_on(cluster).search_kinds(TENANT, ["thread-1", "thread-2"], "apples", QUERY, kinds)


@use("search by meaning only")
def _search_meaning(cluster: StubCluster) -> None:
    index_on(cluster).search_kinds(TENANT, ["thread-1"], "", QUERY, {"memory": 5})


@use("search by words only")
def _search_words(cluster: StubCluster) -> None:
    index_on(cluster).search_kinds(TENANT, ["thread-1"], "apples", [], {"turn": 5})


APRIL_10, APRIL_12 = datetime(2026, 4, 10, tzinfo=UTC), datetime(2026, 4, 12, tzinfo=UTC)
APRIL = Period(since=APRIL_10, until=APRIL_12)


@use("search within an event-time range")
def _search_in_range(cluster: StubCluster) -> None:
    kinds: dict[DocKind, int] = {"memory": 3, "turn": 3}
    index_on(cluster).search_kinds(TENANT, ["thread-1"], "apples", QUERY, kinds, APRIL)


@use("search from a date on, by meaning only")
def _search_since(cluster: StubCluster) -> None:
    index_on(cluster).search_kinds(TENANT, ["thread-1"], "", QUERY, {"memory": 3}, Period(since=APRIL_10))


@use("read the vectors of documents written before half vectors")
def _search_old_documents(cluster: StubCluster) -> None:
    cluster.msearch_answers = [
        [hits([]), hits([{"doc_id": "old", "score": 2.0}]), hits([])],
        [hits([{"doc_id": "old", "vector": [1.0, 0.0, 0.0, 0.0]}])],
    ]
    index_on(cluster).search_kinds(TENANT, ["thread-1"], "apples", QUERY, {"memory": 5})
    assert len(cluster.sent("_msearch")) == 2  # the follow-up search was sent


def requests_of(name: str) -> list[Request]:
    cluster = StubCluster(stored=list(STORED))
    USES[name](cluster)
    assert cluster.requests, f"{name} sent nothing"
    return cluster.requests


@pytest.mark.parametrize("name", list(USES))
def test_every_request_is_an_operation_of_the_spec_with_bodies_its_schemas_accept(name: str) -> None:
    # Given one use of the adapter / When its requests are checked against the spec
    errors = [
        f"{request.method} {request.path}: {error}"
        for request in requests_of(name)
        for error in spec().request_errors(request.method, request.path, request.bodies)
    ]
    # Then the spec finds nothing wrong with any of them
    assert errors == []


@pytest.mark.parametrize("name", [name for name in USES if name.startswith("upsert")])
def test_every_document_written_has_only_fields_of_the_strict_mapping(name: str) -> None:
    # Given the mapping (strict: OpenSearch refuses a document with a field it does not name)
    mapped = set(bodies.index_body(4)["mappings"]["properties"])
    # When an upsert's bulk lines are read
    [bulk] = [request for request in requests_of(name) if request.path.endswith("/_bulk")]
    written = [line for action, line in pairwise(bulk.bodies) if "index" in action]
    # Then every document it indexes names mapped fields only
    assert len(written) == 3
    assert [sorted(set(document) - mapped) for document in written] == [[], [], []]


def test_the_spec_check_refuses_a_misspelt_clause_and_an_unknown_path() -> None:
    # Given a k-NN search with a misspelt key, and a path OpenSearch has no operation for
    misspelt = {"size": 3, "query": {"knn": {"vector": {"vectr": [1.0], "k": 3}}}}
    # When checked / Then both are refused, naming what is wrong
    assert spec().request_errors("POST", "/memories/_search", [misspelt])
    assert spec().request_errors("POST", "/memories/_searches", [misspelt]) == [
        "POST /memories/_searches: no such operation in the OpenSearch API specification"
    ]


def knn_places(node: Any, where: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Where each `knn` clause sits in a search body, as the keys above it (list positions left out)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "knn":
                yield where
            yield from knn_places(value, (*where, key))
    elif isinstance(node, list):
        for value in node:
            yield from knn_places(value, where)


# Where OpenSearch's documentation puts a k-NN query: as the search's query, or as a bool query's
# `must` beside a filter ("Boolean post-filter", vector-search/filter-search-knn/post-filtering).
DOCUMENTED_KNN_PLACES = {("query",), ("query", "bool", "must")}


@pytest.mark.parametrize("name", [name for name in USES if name.startswith("search")])
def test_a_knn_clause_is_only_where_opensearch_documents_it(name: str) -> None:
    # Given the searches of one retrieve
    msearches = [request for request in requests_of(name) if request.path.endswith("/_msearch")]
    searches = [body for request in msearches for body in request.bodies[1::2]]
    # When the places of their k-NN clauses are listed
    places = {place for body in searches for place in knn_places(body)}
    # Then each is a documented one (the spec alone would take a knn clause in any query position)
    assert places <= DOCUMENTED_KNN_PLACES


def filters_of(node: Any) -> Iterator[list[Any]]:
    """Every `filter` list of a search body (the k-NN clause's and the bool queries')."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "filter" and isinstance(value, list):
                yield value
            yield from filters_of(value)
    elif isinstance(node, list):
        for value in node:
            yield from filters_of(value)


def test_an_event_time_range_filters_every_search_of_a_retrieve_inside_the_index() -> None:
    # Given the searches of a retrieve within 10-12 April: k-NN, BM25 and the k nearest's BM25
    msearches = [r for r in requests_of("search within an event-time range") if r.path.endswith("/_msearch")]
    searches = [body for request in msearches for body in request.bodies[1::2]]
    assert len(searches) == 6

    # When their filters are read
    range_clause = bodies.said_filter(APRIL)
    # Then every filter of every search (the k-NN clause's own, so k counts in-range documents
    # only) holds the range, which keeps undated documents (facts) as candidates
    assert all(range_clause in found for body in searches for found in filters_of(body))
    assert sum(1 for body in searches for _ in filters_of(body)) == 8  # per kind: k-NN 1, BM25 1, nearest 2
    assert range_clause == {
        "bool": {
            "should": [
                {"range": {"occurred_at": {"gte": APRIL_10.isoformat(), "lte": APRIL_12.isoformat()}}},
                {"range": {"spoken_of": {"gte": APRIL_10.isoformat(), "lte": APRIL_12.isoformat()}}},
                {"bool": {"must_not": [{"exists": {"field": "occurred_at"}}]}},
            ],
            "minimum_should_match": 1,
        }
    }
