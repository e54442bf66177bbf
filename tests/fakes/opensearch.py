"""A stub OpenSearch transport: the real opensearch-py client, with every HTTP request recorded and
answered from canned responses instead of a cluster."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

Answer = tuple[int, Any]


@dataclass
class Request:
    method: str
    path: str
    params: dict[str, Any]
    bodies: list[Any]  # the JSON body, or each line of an ndjson body

    @property
    def body(self) -> Any:
        return self.bodies[0] if self.bodies else None


@dataclass
class StubCluster:
    """Answers by (method, last path segment); `msearch` and `search` answers pop from lists, in
    order; once they are used up, every search finds `stored` (none by default)."""

    index_exists: bool = False
    msearch_answers: list[list[dict[str, Any]]] = field(default_factory=list)
    bulk_answer: dict[str, Any] = field(default_factory=lambda: {"errors": False, "items": []})
    search_answers: list[dict[str, Any]] = field(default_factory=list)
    stored: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)

    def answer(self, request: Request) -> Answer:
        last = request.path.rstrip("/").rsplit("/", 1)[-1]
        if request.method == "HEAD":
            return (200 if self.index_exists else 404), None
        if last == "_msearch":
            if self.msearch_answers:
                return 200, {"responses": self.msearch_answers.pop(0)}
            return 200, {"responses": [hits(self.stored) for _ in request.bodies[1::2]]}
        if last == "_bulk":
            return 200, self.bulk_answer
        if last == "_search":
            return 200, self.search_answers.pop(0) if self.search_answers else hits(self.stored)
        if request.path.count("/") == 1 and request.method in ("PUT", "DELETE"):  # the index itself
            self.index_exists = request.method == "PUT"
        return 200, {"acknowledged": True}

    def sent(self, suffix: str) -> list[Request]:
        return [request for request in self.requests if request.path.rstrip("/").endswith(suffix)]

    def client(self) -> Any:
        from opensearchpy import OpenSearch
        from opensearchpy.connection import Connection

        cluster = self

        class StubConnection(Connection):
            def perform_request(
                self,
                method: str,
                url: str,
                params: Any = None,
                body: Any = None,
                timeout: Any = None,
                ignore: Any = (),
                headers: Any = None,
            ) -> Any:
                request = Request(method, url, dict(params or {}), _decode(body))
                cluster.requests.append(request)
                status, answer = cluster.answer(request)
                raw = "" if answer is None else json.dumps(answer)
                if not 200 <= status < 300 and status not in ignore:
                    self._raise_error(status, raw)
                return status, {"content-type": "application/json"}, raw

        return OpenSearch(hosts=[{"host": "stub", "port": 9200}], connection_class=StubConnection)


def _decode(body: Any) -> list[Any]:
    if body is None:
        return []
    text = body.decode() if isinstance(body, bytes) else str(body)
    lines = [line for line in text.split("\n") if line.strip()]
    return [json.loads(line) for line in lines]


_SOURCE = ("doc_id", "vector", "half_vector", "occurred_at", "turn_text", "window_vector")


def hits(found: list[dict[str, Any]]) -> dict[str, Any]:
    """A search response over `found` ({"doc_id", "score", optional "vector", "half_vector",
    "occurred_at", "turn_text", "window_vector", "_id"})."""
    return {
        "hits": {
            "hits": [
                {
                    "_id": hit.get("_id", hit.get("doc_id", "")),
                    "_score": hit.get("score", 1.0),
                    "_source": {key: hit[key] for key in _SOURCE if key in hit},
                    "sort": [hit.get("_id", "")],
                }
                for hit in found
            ]
        }
    }
