"""`MemoryEngineStore`: a LangGraph `BaseStore` whose items live in memory-engine's memory bank."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langgraph.store.base import BaseStore, Op, Result

from memory_engine_client import AsyncMemoryEngine, MemoryEngine
from memory_engine_langgraph import plans


class MemoryEngineStore(BaseStore):
    """LangGraph's long-term memory store over a memory-engine API (local or on AWS): put, get,
    delete, search (by meaning with `query`, by value with `filter`) and list_namespaces, sync and
    async. A namespace is a memory-bank scope and an item one fact (docs/clients.md#langgraph-store).

    `index_fields` names the value's fields that are embedded for search (LangGraph's path syntax,
    e.g. ["text", "notes[*]"]); by default every string in the value is. The clients default to
    MEMORY_ENGINE_URL and MEMORY_ENGINE_API_KEY.
    """

    supports_ttl = False

    def __init__(
        self,
        client: MemoryEngine | None = None,
        async_client: AsyncMemoryEngine | None = None,
        *,
        url: str | None = None,
        api_key: str | None = None,
        index_fields: Sequence[str] | None = None,
    ) -> None:
        self._client = client
        self._async_client = async_client
        self._url, self._api_key = url, api_key
        self.index_fields = list(index_fields) if index_fields is not None else None
        self._known: set[tuple[str, ...]] = set()  # namespaces seen in the registry (it only grows)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self._client is None:
            self._client = MemoryEngine(self._url, self._api_key)
        return self._client.run(plans.batch(ops, self.index_fields, self._known))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self._async_client is None:
            self._async_client = AsyncMemoryEngine(self._url, self._api_key)
        return await self._async_client.run(plans.batch(ops, self.index_fields, self._known))
