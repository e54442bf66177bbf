"""The memory bank's single-memory verbs: create a fact, get a memory by name, correct or retire
a fact (keeping its history), read its revisions, delete it."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, NotFound, Unavailable
from memory_engine.models.bank import (
    BankMemory,
    CreateMemoryRequest,
    DeleteMemoryResponse,
    FactRevisionView,
    ListRevisionsResponse,
    PatchMemoryRequest,
    rfc3339,
)
from memory_engine.models.domain import Memory
from memory_engine.models.expiry import expiry_of
from memory_engine.usecases import facts


def create(engine: Engine, tenant: str, request: CreateMemoryRequest) -> BankMemory:
    """Store the fact as given under the scope (no merging: that is what generate does)."""
    expires_at = expiry_of(request, engine.clock.now())
    created = facts.create(
        engine, tenant, request.scope, [request.fact], {"source": "api"}, expires_at=expires_at
    )
    if not created:
        # Only a memory id clash (same second, same 6 random hex digits) writes nothing.
        raise Unavailable("The memory could not be stored this time; send the request again.")
    return BankMemory.of(created[0])


def get(engine: Engine, tenant: str, memory_id: str) -> BankMemory:
    return BankMemory.of(_stored(engine, tenant, memory_id))


def patch(engine: Engine, tenant: str, memory_id: str, request: PatchMemoryRequest) -> BankMemory:
    """Correct a fact's wording (re-embedded and re-indexed, same name) or retire it; the earlier
    wording, or the fact itself once retired, stays as history (`revisions`)."""
    memory = _stored(engine, tenant, memory_id)
    if not memory.is_fact:
        raise Conflict(
            f"memories/{memory_id} was extracted from dialogue, not stored as a fact: only facts can be "
            "corrected or retired; delete it instead.",
            [{"field": "id", "message": "not a fact"}],
        )
    if memory.life.invalid_at is not None:
        raise Conflict(
            f"memories/{memory_id} is retired: it stays as history. Store the fact anew (POST /v1/memories).",
            [{"field": "id", "message": "retired"}],
        )
    now = engine.clock.now()
    if request.fact is None:
        changed = facts.retired(memory, now, "retire")
    else:
        vector = engine.embedder.embed([request.fact], mode="passage")[0]
        changed = facts.reworded(memory, request.fact, vector, now, "correct")
    # Over the life just read: a correction or retirement that landed meanwhile is never
    # overwritten (its revision would be lost without a trace); the caller reads and decides.
    if not engine.store.update_memory(changed, expected_life=memory.life):
        if engine.store.get_memory(tenant, memory_id) is None:
            raise NotFound(
                f"memories/{memory_id} was deleted meanwhile.", [{"field": "id", "message": "deleted"}]
            )
        raise Conflict(
            f"memories/{memory_id} was corrected or retired by another request meanwhile; read it again "
            "(GET /v1/memories/{id}) and send the change again if it still applies.",
            [{"field": "id", "message": "changed meanwhile"}],
        )
    if request.fact is not None:
        # Here, not at the top: reading a memory (GET) needs no index layout (issue 46, cold start).
        from memory_engine.indexing.documents import index_document

        engine.index.upsert([index_document(changed)])
    return BankMemory.of(changed)


def revisions(engine: Engine, tenant: str, memory_id: str) -> ListRevisionsResponse:
    """Every wording the memory had, oldest first, with the event time each held."""
    memory = _stored(engine, tenant, memory_id)
    life = memory.life
    earlier = [
        FactRevisionView(
            fact=revision.fact,
            validFrom=None if revision.valid_from is None else rfc3339(revision.valid_from),
            invalidAt=rfc3339(revision.invalid_at),
            reason=revision.reason,
            supersededBy=revision.superseded_by,
        )
        for revision in life.revisions
    ]
    now = FactRevisionView(
        fact=memory.content,
        validFrom=rfc3339(memory.stated_at),
        invalidAt=None if life.invalid_at is None else rfc3339(life.invalid_at),
        reason=life.end_reason,
        supersededBy=life.superseded_by,
    )
    return ListRevisionsResponse(name=f"memories/{memory_id}", revisions=[*earlier, now])


def delete(engine: Engine, tenant: str, memory_id: str) -> DeleteMemoryResponse:
    """Delete one memory, a fact or an engine memory (whose turns stay as history, forgotten).
    What it replaced holds again: the facts a merge retired for it, or what its key facts
    replaced (`removed_facts`). In a dialog delete's order: read, the delete recorded
    (`delete_intents`), what it replaced reopened, then the removal, its statements taken out of
    the thread's record and its documents purged, and the record ended. A delete whose process
    died before the removal is finished by its retry (it finds the memory); one that died after
    it, by the sweep (the retry's 404 names no thread)."""
    from memory_engine.usecases import delete_intents, index_purge, removed_facts  # only a delete's

    memory = _stored(engine, tenant, memory_id)
    intent = delete_intents.begin(engine, tenant, "bank", memory_id, memory=memory)
    # A fact that replaced others (a merge retired them for it): they hold again.
    facts.reopen_replaced(engine, [memory])
    removed_facts.forget_ahead(engine, memory)  # an engine memory's: what its key facts replaced
    engine.store.delete_memory(tenant, memory_id)
    if memory.fields.key_facts:  # its statements leave the thread's record
        removed_facts.forget(engine, tenant, memory.parent_session_uuid, [memory_id], [memory])
    index_purge.delete(engine, tenant, [memory_id])
    engine.store.end_delete(intent)
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
