"""Facts under a scope, shared by the memory bank and chat memory: create one, find the nearest,
merge newly said facts into a scope.

A fact is a `Memory` in the engine's one store and index (see `Memory`): its thread is
`scope_key(scope)`, so the index searches a scope exactly as it searches an engine thread.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from memory_engine.engine import Engine
from memory_engine.errors import NotFound
from memory_engine.extraction.injection import is_instruction
from memory_engine.indexing.documents import index_document
from memory_engine.models.bank import rfc3339
from memory_engine.models.domain import FACT_KIND, Memory, MemoryFields, new_memory_id, scope_key
from memory_engine.usecases import index_purge

# Existing facts shown to the extractor when merging: the nearest ones to what was said.
MERGE_CANDIDATES = 50
# Index candidates fetched per wanted hit: distances are recomputed from the stored vectors.
_OVERFETCH = 2

Action = Literal["CREATED", "UPDATED", "DELETED"]


@dataclass(frozen=True)
class FactChange:
    action: Action
    memory: Memory


_HANGUL = re.compile("[\uac00-\ud7a3]")


def fact_language(configured: str | None, texts: Sequence[str]) -> str:
    """The language to extract facts in: the configured one, else Korean for words with Hangul
    (the engine's default language), else English."""
    if configured:
        return configured
    return "ko" if any(_HANGUL.search(text) for text in texts) else "en"


def euclidean(left: Sequence[float], right: Sequence[float]) -> float:
    if len(left) != len(right):
        return math.inf  # embedded by another model: as far as can be
    return math.sqrt(sum((a - b) * (a - b) for a, b in zip(left, right, strict=True)))


def nearest(
    engine: Engine, tenant: str, scope: Mapping[str, str], query: str, k: int
) -> list[tuple[Memory, float]]:
    """Up to k memories of exactly this scope, closest first: (memory, Euclidean distance between
    the query's embedding and the memory's). Ties go to the older memory id."""
    if k <= 0:
        return []
    thread = scope_key(scope)
    if not engine.store.list_thread_memories(tenant, thread, limit=1):
        return []  # a new user or scope: no need to embed the query at all
    vector = engine.embedder.embed([query], mode="query")[0]
    # Dense candidates only (empty text): the order asked for is the embeddings' distance.
    hits = engine.index.search(tenant, [thread], "", vector, k * _OVERFETCH)
    found: list[tuple[Memory, float]] = []
    for hit in hits:
        memory = engine.store.get_memory(tenant, hit.doc_id)
        # The scope check guards against a stale index entry or a (128-bit) key collision.
        if memory is not None and memory.visible_scope == dict(scope):
            found.append((memory, euclidean(vector, memory.embedding)))
    found.sort(key=lambda pair: (pair[1], pair[0].memory_id))
    return found[:k]


def create(
    engine: Engine,
    tenant: str,
    scope: Mapping[str, str],
    texts: Sequence[str],
    origin: Mapping[str, str] | None = None,
) -> list[Memory]:
    """Store each text as a new fact of the scope (embedded in one call) and index them."""
    if not texts:
        return []
    vectors = engine.embedder.embed(list(texts), mode="passage")
    thread = scope_key(scope)
    created: list[Memory] = []
    for text, vector in zip(texts, vectors, strict=True):
        now = engine.clock.now()
        memory = Memory(
            tenant=tenant,
            memory_id=new_memory_id(now),
            session_uuid="",
            parent_session_uuid=thread,
            fields=MemoryFields(summary=text),
            source_dialog_uuids=[],
            first_seq=0,
            last_seq=0,
            embedding=vector,
            created_at=now,
            metadata={"kind": FACT_KIND, **(origin or {})},
            scope=dict(scope),
        )
        if engine.store.save_memory(memory):
            created.append(memory)
    engine.index.upsert([index_document(memory) for memory in created])
    return created


def merge(
    engine: Engine,
    tenant: str,
    scope: Mapping[str, str],
    messages: Sequence[str],
    language: str,
    origin: Mapping[str, str] | None = None,
) -> list[FactChange]:
    """Extract facts from the user's `messages` and merge them into the scope's facts: new ones
    are added, changed ones updated in place (same id), contradicted ones deleted, repeated ones
    left alone; a fact that reads as orders to a model (`injection.is_instruction`) is neither
    added nor written over another. Engine memories of the scope are never touched."""
    said = [message for message in messages if message.strip()]
    if not said:
        return []
    candidates = nearest(engine, tenant, scope, "\n".join(said), MERGE_CANDIDATES)
    existing = {memory.memory_id: memory for memory, _ in candidates if memory.is_fact}
    operations = [
        op
        for op in engine.facts.extract_facts(
            said, [(memory_id, memory.content) for memory_id, memory in existing.items()], language
        )
        # An extractor (a model above all) may take an order for a fact: it is never kept as one,
        # so it cannot reach a chat model's prompt dressed as something remembered.
        if op.op not in ("add", "update") or not is_instruction(op.fact)
    ]
    changes: list[FactChange] = []
    updates = [(existing[op.id], op.fact) for op in operations if op.op == "update" and op.id in existing]
    if updates:
        vectors = engine.embedder.embed([text for _, text in updates], mode="passage")
        for (old, text), vector in zip(updates, vectors, strict=True):
            changes.extend(_update(engine, old, text, vector))
    for op in operations:
        if op.op == "delete" and op.id in existing:
            changes.extend(_delete(engine, existing[op.id]))
    added = create(engine, tenant, scope, [op.fact for op in operations if op.op == "add"], origin)
    changes.extend(FactChange("CREATED", memory) for memory in added)
    return changes


def _update(engine: Engine, old: Memory, text: str, vector: list[float]) -> list[FactChange]:
    metadata = {**old.metadata, "updated_at": rfc3339(engine.clock.now())}
    new = old.model_copy(
        update={"fields": MemoryFields(summary=text), "embedding": vector, "metadata": metadata}
    )
    if not engine.store.update_memory(new):
        return []  # deleted meanwhile: nothing to update
    engine.index.upsert([index_document(new)])
    return [FactChange("UPDATED", new)]


def _delete(engine: Engine, memory: Memory) -> list[FactChange]:
    try:
        engine.store.delete_memory(memory.tenant, memory.memory_id)
    except NotFound:
        return []  # deleted meanwhile
    finally:
        index_purge.delete(engine, memory.tenant, [memory.memory_id])
    return [FactChange("DELETED", memory)]
