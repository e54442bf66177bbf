"""`MemoryEngineStore`: a LangGraph `BaseStore` whose items live in memory-engine's memory bank."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langgraph.store.base import BaseStore, Op, Result

from memory_engine_client import AsyncMemoryEngine, MemoryEngine
from memory_engine_langgraph import plans


class MemoryEngineStore(BaseStore):
    """LangGraph's long-term memory store over a memory-engine API (local or on AWS): put, get,
    delete, search (by meaning with `query`, by value with `filter`) and list_namespaces, sync and
    async. A namespace is a pair of memory-bank scopes and an item a record beside the texts that
    find it (docs/clients.md#langgraph-store).

    `MemoryEngineStore(url, api_key)`, both defaulting to MEMORY_ENGINE_URL and
    MEMORY_ENGINE_API_KEY. `index` is LangGraph's index configuration: its `fields` name the texts
    ranked by meaning (LangGraph's path syntax, default ["$"]: the whole value); the engine embeds
    them with its own model, so `dims` and `embed` are not taken. `put(..., index=False)` stores an
    item that a query never ranks, as LangGraph's stores do.
    """

    supports_ttl = False

    def __init__(
        self,
        url: str | MemoryEngine | None = None,
        api_key: str | None = None,
        *,
        index: dict[str, Any] | None = None,
        index_fields: Sequence[str] | None = None,
        client: MemoryEngine | None = None,
        async_client: AsyncMemoryEngine | None = None,
    ) -> None:
        if isinstance(url, MemoryEngine):  # the client given first, as before url and key were
            client, url = url, None
        if index is not None and ({"dims", "embed"} & set(index)):
            raise ValueError(
                "index: the engine embeds with its own model: give only `fields` (not dims or embed)"
            )
        fields = (index or {}).get("fields", index_fields)
        self.index_fields = list(fields) if fields is not None else None
        self._client = client
        self._async_client = async_client
        self._url, self._api_key = url, api_key
        self._known: set[tuple[str, ...]] = set()  # namespaces seen in the registry (it only grows)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self._client is None:
            self._client = MemoryEngine(self._url, self._api_key)
        return self._client.run(plans.batch(ops, self.index_fields, self._known))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self._async_client is None:
            self._async_client = AsyncMemoryEngine(self._url, self._api_key)
        return await self._async_client.run(plans.batch(ops, self.index_fields, self._known))
