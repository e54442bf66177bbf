"""How a memory is presented to the search index, and rebuilding the index from the store."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from memory_engine.models.domain import Memory, Turn
from memory_engine.ports import IndexDocument, SearchIndex, Store


def extraction_text(turns: Sequence[Turn]) -> str:
    """The batch's dialogue, each turn cut to its `length_limit`, as extraction and search see it."""
    return "\n".join(turn.text()[: turn.length_limit] for turn in turns)


def embedding_text(memory: Memory) -> str:
    """What the dense vector of a memory encodes: its summary and key facts."""
    return "\n".join([memory.fields.summary, *memory.fields.key_facts])


def lexical_text(memory: Memory) -> str:
    """What BM25 matches: every extracted field plus the source dialogue itself."""
    fields = memory.fields
    parts = [
        fields.summary,
        " ".join(fields.keywords),
        *fields.key_facts,
        *fields.key_dialogue,
        " ".join(fields.characters),
        fields.location,
        memory.source_text,
    ]
    return "\n".join(part for part in parts if part)


def index_document(memory: Memory) -> IndexDocument:
    return IndexDocument(
        tenant=memory.tenant,
        doc_id=memory.memory_id,
        session_uuid=memory.session_uuid,
        thread=memory.parent_session_uuid,
        text=lexical_text(memory),
        vector=memory.embedding,
        source_dialog_uuids=memory.source_dialog_uuids,
        created_at=memory.created_at,
    )


def index_stored(store: Store, index: SearchIndex, memories: Sequence[Memory]) -> None:
    """Index memories just written to the store, then drop any that a concurrent delete removed
    from the store meanwhile: the delete's own index delete may have run before this upsert."""
    if not memories:
        return
    index.upsert([index_document(memory) for memory in memories])
    gone = [m.memory_id for m in memories if store.get_memory(m.tenant, m.memory_id) is None]
    if gone:
        index.delete(memories[0].tenant, gone)


def rebuild(
    store: Store,
    index: SearchIndex,
    tenant: str | None = None,
    batch: int = 500,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Clear the index (for one tenant or all) and index every stored memory again."""
    index.clear(tenant)
    pending: list[IndexDocument] = []
    count = 0
    memories: Iterable[Memory] = store.iter_memories(tenant)
    for memory in memories:
        pending.append(index_document(memory))
        if len(pending) >= batch:
            index.upsert(pending)
            count += len(pending)
            pending = []
            if progress:
                progress(count)
    if pending:
        index.upsert(pending)
        count += len(pending)
        if progress:
            progress(count)
    return count
