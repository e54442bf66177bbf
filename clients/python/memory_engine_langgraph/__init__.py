"""memory-engine as LangGraph's long-term memory (docs/clients.md#langgraph-store):

from memory_engine_langgraph import MemoryEngineStore

store = MemoryEngineStore()  # MEMORY_ENGINE_URL, MEMORY_ENGINE_API_KEY
store.put(("users", "42"), "diet", {"text": "Allergic to peanuts."})
store.search(("users", "42"), query="what can they not eat?")
graph = builder.compile(store=store)
"""

from memory_engine_langgraph.store import MemoryEngineStore

__all__ = ["MemoryEngineStore"]
