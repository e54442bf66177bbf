"""Which memory-bank requests the LangGraph store sends for a batch, against a small in-process
bank (httpx's mock transport): no more than the operations need."""

from __future__ import annotations

import json
from itertools import count

import httpx
from langgraph.store.base import GetOp, Item

from memory_engine_client import MemoryEngine
from memory_engine_langgraph import MemoryEngineStore


class FakeBank:
    """The bank's create, list, search and delete, enough for the store; records each request."""

    def __init__(self) -> None:
        self.memories: dict[str, dict[str, object]] = {}
        self.requests: list[str] = []
        self._ids = count()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else {}
        scope = body.get("scope", {})
        self.requests.append(f"{request.method} {request.url.path} {json.dumps(scope, sort_keys=True)}")
        if request.method == "DELETE":
            name = request.url.path.removeprefix("/v1/")
            self.memories.pop(name)
            return httpx.Response(200, json={"name": name, "deleted": True})
        if request.url.path == "/v1/memories":
            name = f"memories/20261201_000000_{next(self._ids):06x}"
            stamp = f"2026-12-01T00:00:{len(self.memories):02d}.000000Z"
            memory = {
                "name": name,
                "fact": body["fact"],
                "scope": scope,
                "createTime": stamp,
                "updateTime": stamp,
            }
            self.memories[name] = memory
            return httpx.Response(200, json=memory)
        found = [{"memory": memory} for memory in self.memories.values() if memory["scope"] == scope]
        return httpx.Response(200, json={"retrieved_memories": found})


def store_over(bank: FakeBank) -> MemoryEngineStore:
    return MemoryEngineStore(MemoryEngine("http://bank.test", "key", transport=httpx.MockTransport(bank)))


def test_a_put_into_a_new_namespace_registers_it_once() -> None:
    bank = FakeBank()
    store = store_over(bank)

    store.put(("users", "1"), "a", {"text": "first"})
    store.put(("users", "1"), "b", {"text": "second"})

    registrations = [r for r in bank.requests if r.startswith("POST /v1/memories ") and "registry" in r]
    assert len(registrations) == 1


def test_a_put_into_a_namespace_the_store_has_seen_reads_no_registry() -> None:
    bank = FakeBank()
    store = store_over(bank)
    store.put(("users", "1"), "a", {"text": "first"})
    bank.requests.clear()

    store.put(("users", "1"), "a", {"text": "changed"})

    assert [request.split(" ", 2)[:2] for request in bank.requests] == [
        ["POST", "/v1/memories/retrieve"],  # the namespace's items
        ["POST", "/v1/memories"],  # the new version
        ["DELETE", "/v1/memories/20261201_000000_000001"],  # the old one
    ]
    assert "registry" not in bank.requests[0]


def test_gets_of_one_namespace_in_a_batch_share_one_listing() -> None:
    bank = FakeBank()
    store = store_over(bank)
    store.put(("n",), "a", {"text": "A"})
    store.put(("n",), "b", {"text": "B"})
    bank.requests.clear()

    found = store.batch([GetOp(("n",), key) for key in ["a", "b", "missing"]])

    assert [item.key if isinstance(item, Item) else None for item in found] == ["a", "b", None]
    assert len(bank.requests) == 1
