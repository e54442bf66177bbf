"""`SearchIndex` on OpenSearch (Amazon OpenSearch Service `es`, or Serverless `aoss`): k-NN + BM25.

- The index is created by `memory-engine create-index` at deploy/bootstrap time, never here: the
  constructor stores settings, the client is built on first use.
- SigV4 signing (requests-aws4auth, with the function's refreshable credentials) for AWS endpoints;
  any other URL (a local test cluster) is used as it is.
- Serverless vector collections accept neither custom document ids nor refresh: there a document
  is stored under a generated id, an upsert deletes the older copies of the same (tenant, doc id),
  deletes go by query-then-bulk, and searches collapse duplicate copies. Managed domains get the
  tenant-unique `_id` and plain bulk upserts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, KeysView, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from memory_engine.adapters.aws import opensearch_bodies as bodies
from memory_engine.adapters.aws import opensearch_hits
from memory_engine.adapters.aws.clients import unavailable
from memory_engine.adapters.aws.opensearch_bodies import Body
from memory_engine.adapters.encoding import unit_vector
from memory_engine.errors import InvalidInput, Unavailable
from memory_engine.ports import DocKind, IndexDocument, IndexHit, Period, SearchIndex
from memory_engine.retrieval import candidates

_PAGE = 500
# How long after a write a search is sure to show it (`EventuallyConsistent`). Serverless: "the
# refresh interval for indexes might be between 10 and 30 seconds" (OpenSearch Serverless
# developer guide, limitations), doubled. A managed domain refreshes every second by default.
SETTLE_SECONDS = {"aoss": 60.0, "es": 10.0}
# What a caller of a refused bulk or search is told. The error's reason names the index and
# document ids and may quote a document or the query: the log has it in debug only.
_RETRY = "retry shortly (the service log has the details)."


class OpenSearchIndex(SearchIndex):
    def __init__(
        self,
        url: str,
        index: str = "memories",
        dimension: int = 384,
        service: str = "aoss",
        region: str | None = None,
        engine: bodies.Engine = "faiss",
        analyzer: bodies.Analyzer = "nori",
        refresh: bool = False,
        client: Any = None,
    ) -> None:
        self.url = url
        self.index = index
        self.dimension = dimension
        self.service = service
        self.region = region
        self.engine: bodies.Engine = engine
        self.analyzer: bodies.Analyzer = analyzer
        # Make writes visible to the next search at once (tests); not available on Serverless.
        self.refresh = refresh and service != "aoss"
        self._client = client

    @property
    def settle_seconds(self) -> float:
        """How long after a write a delete is sure to find it (0 with refresh on every write)."""
        return 0.0 if self.refresh else SETTLE_SECONDS.get(self.service, SETTLE_SECONDS["aoss"])

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = _connect(self.url, self.service, self.region)
        return self._client

    @property
    def custom_ids(self) -> bool:
        return self.service != "aoss"

    # -- bootstrap -------------------------------------------------------------------------------

    def create_index(self, recreate: bool = False) -> bool:
        """Create the index with its mapping; False when it already existed (and was kept)."""
        with self._errors():
            exists = bool(self.client.indices.exists(index=self.index))
            if exists and not recreate:
                # Fields added to the mapping since the index was made (the mapping is strict).
                self.client.indices.put_mapping(index=self.index, body=bodies.added_fields())
                return False
            if exists:
                self.client.indices.delete(index=self.index)
            self.client.indices.create(
                index=self.index, body=bodies.index_body(self.dimension, self.engine, self.analyzer)
            )
        return True

    def ensure_index(self) -> None:
        """Create the index if it does not exist (the deploy-time custom resource calls this)."""
        self.create_index(recreate=False)

    # -- writes ----------------------------------------------------------------------------------

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if not docs:
            return
        wrong = [
            doc.doc_id
            for doc in docs
            if any(len(vector) != self.dimension for vector in (doc.vector, doc.window_vector or doc.vector))
        ]
        if wrong:
            raise InvalidInput(
                f"documents {wrong} do not have {self.dimension}-dimensional vectors, the dimension of "
                "the search index (MEMORY_ENGINE_EMBEDDING_DIMENSION); re-embed them with the same model"
            )
        lines: list[Body] = []
        if not self.custom_ids:
            by_tenant: dict[str, list[str]] = {}
            for doc in docs:
                by_tenant.setdefault(doc.tenant, []).append(doc.doc_id)
            for tenant, doc_ids in by_tenant.items():
                lines += [
                    {"delete": {"_id": copy}}
                    for copy in self._copies(bodies.scope_filter(tenant, doc_ids=doc_ids))
                ]
        for doc in docs:
            key = bodies.document_key(doc.tenant, doc.doc_id) if self.custom_ids else None
            lines.append({"index": {"_id": key}} if key else {"index": {}})
            lines.append(bodies.document(doc, unit_vector(doc.vector), copy_id=key))
        self._bulk(lines)

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        """Remove documents and the turn documents of those that are memories; unknown ids are
        ignored, so deletes can be replayed."""
        if not doc_ids:
            return
        self._delete_where(bodies.memories_and_their_turns(tenant, list(doc_ids)))

    def clear(self, tenant: str | None = None) -> None:
        self._delete_where(bodies.scope_filter(tenant) if tenant is not None else [{"match_all": {}}])

    def _delete_where(self, filters: list[Body]) -> None:
        copies = list(self._copies(filters))
        for start in range(0, len(copies), _PAGE):
            self._bulk([{"delete": {"_id": copy}} for copy in copies[start : start + _PAGE]])

    def _copies(self, filters: list[Body]) -> Iterator[str]:
        """The `_id` of every stored copy matching the filters (search_after over copy_id)."""
        after: list[Any] | None = None
        while True:
            with self._errors():
                response = self.client.search(
                    index=self.index, body=bodies.copies_query(filters, _PAGE, after)
                )
            hits = response["hits"]["hits"]
            yield from (hit["_id"] for hit in hits)
            if len(hits) < _PAGE:
                return
            after = hits[-1]["sort"]

    def _bulk(self, lines: list[Body]) -> None:
        if not lines:
            return
        payload = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"
        params = {"refresh": "true"} if self.refresh else {}
        with self._errors():
            response = self.client.bulk(body=payload, index=self.index, params=params)
        if response.get("errors"):
            failures = [
                item
                for action in response["items"]
                for item in action.values()
                if item.get("status", 200) >= 300
            ]
            failures = [item for item in failures if item.get("status") != 404]  # deleting the absent is fine
            if failures:
                message = (
                    f"OpenSearch refused {len(failures)} bulk action(s) ({_error_type(failures[0])}); "
                    + _RETRY
                )
                error = failures[0].get("error")
                raise unavailable(message, self.resource, error, safe_detail=_error_type(failures[0]))

    # -- search ----------------------------------------------------------------------------------

    def search_kinds(
        self,
        tenant: str,
        threads: Sequence[str],
        text: str,
        vector: Sequence[float],
        k: Mapping[DocKind, int],
        said: Period | None = None,
        terms: Sequence[str] | None = None,
    ) -> dict[DocKind, list[IndexHit]]:
        """One `_msearch` for every kind: its k-NN search, its BM25 search and the BM25 scores of
        its k nearest documents (`bodies.nearest_words_query`), so every candidate has both scores
        and `candidates.merge` orders them as it does for the local index. `said` filters each of
        them (inside the k-NN clause too). `terms` is not used: OpenSearch analyses `text` with the
        index's own analyzer."""
        found: dict[DocKind, list[IndexHit]] = {kind: [] for kind in k}
        threads = list(dict.fromkeys(threads))
        wanted = {kind: n for kind, n in k.items() if n > 0}
        if not wanted or not threads:
            return found
        if len(vector) and len(vector) != self.dimension:
            raise InvalidInput(
                f"the query vector has {len(vector)} dimensions but the search index holds "
                f"{self.dimension}; embed the query with the model that embedded the memories"
            )
        query = unit_vector(vector)
        by_meaning, by_words = bool(len(vector)), bool(text.strip())
        if not (by_meaning or by_words):
            return found
        searches: list[Body] = []
        for kind, n in wanted.items():
            if by_meaning:
                searches.append(bodies.knn_query(tenant, threads, query, n, kind, said))
            if by_words:
                searches.append(bodies.lexical_query(tenant, threads, text, n, kind, said))
            if by_meaning and by_words:
                searches.append(bodies.nearest_words_query(tenant, threads, text, query, n, kind, said))
        responses = iter(self._msearch(searches))
        parsed = []
        for _ in wanted:  # the responses come back in the order of the searches
            nearest = next(responses) if by_meaning else {"hits": {"hits": []}}
            dense = opensearch_hits.dense_hits(nearest, query)
            lexical = opensearch_hits.lexical_hits(next(responses), query) if by_words else {}
            knn_scores = opensearch_hits.knn_scores(nearest)
            words = opensearch_hits.words(next(responses), knn_scores) if by_meaning and by_words else {}
            parsed.append((dense, lexical, words))
        self._fill_cosines(tenant, query, [(lexical, dense.keys()) for dense, lexical, _ in parsed])
        for kind, (dense, lexical, words) in zip(wanted, parsed, strict=True):
            about = {**lexical, **dense}
            merged = candidates.merge(
                {doc_id: hit.dense for doc_id, hit in dense.items()},
                {doc_id: hit.lexical for doc_id, hit in lexical.items()},
                dense_of={doc_id: hit.dense for doc_id, hit in lexical.items()},
                lexical_of=words,
            )
            found[kind] = [
                IndexHit(
                    doc_id=hit.doc_id,
                    dense=hit.dense,
                    lexical=hit.lexical,
                    memory_id=opensearch_hits.memory_of(hit.doc_id, kind),
                    occurred_at=about[hit.doc_id].occurred_at,
                    text=about[hit.doc_id].text,
                    window=about[hit.doc_id].window,
                )
                for hit in merged
            ]
        return found

    def _fill_cosines(
        self,
        tenant: str,
        query: Sequence[float],
        found: list[tuple[dict[str, opensearch_hits.Found], KeysView[str]]],
    ) -> None:
        """Lexical hits written before half vectors came back without one: one more search reads
        their full vectors for their cosine to the query (a hit the k-NN search also found has its
        cosine from there). A reindex writes the half vectors, and then this search is not sent."""
        unread = {doc_id for lexical, _ in found for doc_id, hit in lexical.items() if hit.unread}
        missing = sorted(unread - {doc_id for _, dense in found for doc_id in dense})
        cosines: dict[str, float] = {}
        if missing:
            (response,) = self._msearch([bodies.vectors_query(tenant, missing)])
            cosines = opensearch_hits.vector_cosines(response, query)
        for lexical, _ in found:
            for doc_id, hit in lexical.items():
                if hit.unread:
                    lexical[doc_id] = hit._replace(dense=cosines.get(doc_id, 0.0), unread=False)

    def _msearch(self, searches: list[Body]) -> list[Body]:
        # The index goes in the path (`POST /<index>/_msearch`), never in the header lines: IAM
        # authorises a managed domain's requests by path, and the functions are granted the index's
        # paths only (`<domain>/<index>`, `<domain>/<index>/*`), not the domain's root `/_msearch`.
        lines: list[Body] = []
        for search in searches:
            lines += [{}, search]
        payload = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"
        with self._errors():
            response = self.client.msearch(body=payload, index=self.index)
        results: list[Body] = response["responses"]
        failed = [result["error"] for result in results if "error" in result]
        if failed:
            message = f"OpenSearch search failed ({_error_type(failed[0])}); {_RETRY}"
            raise unavailable(message, self.resource, failed[0], safe_detail=_error_type(failed[0]))
        return results

    @property
    def resource(self) -> str:
        """The endpoint and index, for the log only: a caller's 503 names neither (docs/security.md, Errors
        and logs)."""
        return f"{self.url} index {self.index}"

    @contextmanager
    def _errors(self) -> Iterator[None]:
        from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
        from opensearchpy.exceptions import NotFoundError, TransportError

        try:
            yield
        except NotFoundError as error:
            message = (
                "The OpenSearch index does not exist; create it with `memory-engine create-index` "
                "or fix MEMORY_ENGINE_OPENSEARCH_INDEX."
            )
            raise unavailable(message, self.resource, error) from error
        except OpenSearchConnectionError as error:  # its text holds the endpoint
            message = f"OpenSearch could not be reached ({type(error).__name__}); retry shortly."
            raise unavailable(message, self.resource, error) from error
        except TransportError as error:
            status = error.status_code if isinstance(error.status_code, int) else 0
            if status == 429 or status >= 500:
                message = f"OpenSearch is busy or unavailable ({status}); retry shortly."
                raise unavailable(message, self.resource, error) from error
            raise


def _error_type(error: Any) -> str:
    """The `type` of an OpenSearch error object (`{"type": ..., "reason": ...}`), or of the item
    holding it under `error`."""
    if isinstance(error, dict):
        inner = error.get("error", error)
        if isinstance(inner, dict) and inner.get("type"):
            return str(inner["type"])
    return "error"


def _connect(url: str, service: str, region: str | None) -> Any:
    from opensearchpy import OpenSearch, RequestsHttpConnection

    auth = None
    if ".amazonaws.com" in url:
        import boto3
        from requests_aws4auth import AWS4Auth

        session = boto3.session.Session()
        credentials = session.get_credentials()
        if credentials is None:
            raise Unavailable(
                "No AWS credentials to sign OpenSearch requests with; check the function's role."
            )
        auth = AWS4Auth(
            region=region or session.region_name, service=service, refreshable_credentials=credentials
        )
    return OpenSearch(
        hosts=[url],
        http_auth=auth,
        use_ssl=url.startswith("https"),
        verify_certs=url.startswith("https"),
        connection_class=RequestsHttpConnection,
        timeout=10,
        max_retries=2,
        retry_on_timeout=True,
        http_compress=True,
    )
