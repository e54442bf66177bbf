"""A memory bank in process, behind httpx's MockTransport: create, get, list, search and delete, as
the scoped memory-bank routes answer them (docs/api.md §3), with a small deterministic embedding
that LangGraph's InMemoryStore can be given too, so the two stores can be ranked side by side."""

from __future__ import annotations

import hashlib
import json
import math
from itertools import count
from typing import Any

import httpx

DIMS = 64


def embed(text: str) -> list[float]:
    """Hashed character trigrams, unit length: alike texts are near, as a real model's are."""
    vector = [0.0] * DIMS
    padded = f"  {text.lower()}  "
    for n in range(len(padded) - 2):
        digest = hashlib.blake2b(padded[n : n + 3].encode(), digest_size=2).digest()
        vector[int.from_bytes(digest, "big") % DIMS] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def embed_many(texts: list[str]) -> list[list[float]]:
    """The same embedding as LangGraph's `embed` callable wants it."""
    return [embed(text) for text in texts]


class FakeBank:
    """Records each request as "METHOD path scope"."""

    def __init__(self) -> None:
        self.memories: dict[str, dict[str, Any]] = {}
        self.requests: list[str] = []
        self._ids = count()

    def client_transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else {}
        scope = body.get("scope", {})
        self.requests.append(f"{request.method} {request.url.path} {json.dumps(scope, sort_keys=True)}")
        if request.method == "DELETE":
            name = request.url.path.removeprefix("/v1/")
            if self.memories.pop(name, None) is None:
                return httpx.Response(404, json={"status": "error", "message": f"no memory {name}"})
            return httpx.Response(200, json={"name": name, "deleted": True})
        if request.url.path == "/v1/memories":
            n = next(self._ids)
            name = f"memories/20261201_000000_{n:06x}"
            stamp = f"2026-12-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000000Z"
            memory = {
                "name": name,
                "fact": body["fact"],
                "scope": scope,
                "createTime": stamp,
                "updateTime": stamp,
            }
            self.memories[name] = memory
            return httpx.Response(200, json=memory)
        held = [memory for memory in self.memories.values() if memory["scope"] == scope]
        search = body.get("similarity_search_params")
        if search is None:
            return httpx.Response(200, json={"retrieved_memories": [{"memory": memory} for memory in held]})
        query = embed(search["search_query"])
        scored = sorted(
            ({"memory": m, "distance": _distance(query, embed(m["fact"]))} for m in held),
            key=lambda hit: hit["distance"],
        )
        return httpx.Response(200, json={"retrieved_memories": scored[: search.get("top_k", 3)]})


def _distance(a: list[float], b: list[float]) -> float:
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))
