"""The memory bank's single-memory verbs: create a fact, get a memory by name, delete it."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.errors import NotFound, Unavailable
from memory_engine.models.bank import BankMemory, CreateMemoryRequest, DeleteMemoryResponse
from memory_engine.models.domain import Memory
from memory_engine.usecases import facts, index_purge


def create(engine: Engine, tenant: str, request: CreateMemoryRequest) -> BankMemory:
    """Store the fact as given under the scope (no merging: that is what generate does)."""
    created = facts.create(engine, tenant, request.scope, [request.fact], {"source": "api"})
    if not created:
        # Only a memory id clash (same second, same 6 random hex digits) writes nothing.
        raise Unavailable("The memory could not be stored this time; send the request again.")
    return BankMemory.of(created[0])


def get(engine: Engine, tenant: str, memory_id: str) -> BankMemory:
    return BankMemory.of(_stored(engine, tenant, memory_id))


def delete(engine: Engine, tenant: str, memory_id: str) -> DeleteMemoryResponse:
    """Delete one memory, a fact or an engine memory (whose turns stay as history, forgotten)."""
    _stored(engine, tenant, memory_id)
    engine.store.delete_memory(tenant, memory_id)
    index_purge.delete(engine, tenant, [memory_id])
    return DeleteMemoryResponse(name=f"memories/{memory_id}")


def _stored(engine: Engine, tenant: str, memory_id: str) -> Memory:
    memory = engine.store.get_memory(tenant, memory_id)
    if memory is None:
        raise NotFound(
            f"No memory memories/{memory_id}; it may be deleted already. Retrieve the scope's "
            "memories to find a current name.",
            [{"field": "id", "message": "unknown memory"}],
        )
    return memory
