"""Facts under a scope, shared by the memory bank and chat memory: create one, find the nearest,
merge newly said facts into a scope.

A fact is a `Memory` in the engine's one store and index (see `Memory`): its thread is
`scope_key(scope)`, so the index searches a scope exactly as it searches an engine thread.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, NoReturn

from memory_engine.engine import Engine
from memory_engine.errors import Conflict
from memory_engine.models.domain import FACT_KIND, Memory, MemoryFields, new_memory_id, scope_key
from memory_engine.models.life import EndReason, FactRevision, MemoryLife
from memory_engine.models.timestamps import rfc3339
from memory_engine.ports import EventuallyConsistent
from memory_engine.usecases.compare_and_set import Lost, compare_and_set, read_again

log = logging.getLogger("memory_engine.facts")

# The writes below load the injection rules and the index's document layout on first use: a bank
# search's handler imports this module and reads facts only (cold start, bench/speed/cold_start).

# Existing facts shown to the extractor when merging: the nearest ones to what was said.
MERGE_CANDIDATES = 50
# Index candidates fetched per wanted hit: distances are recomputed from the stored vectors.
_OVERFETCH = 2
# Facts of a scope written too recently for the index to show (read from the store instead):
# at most this many, the oldest of them first. Bounds one search's extra store read.
YOUNG_FACTS = 100

Action = Literal["CREATED", "UPDATED", "DELETED"]

# A fact's metadata: the ids of the facts a merge retired as replaced by it (their
# `life.superseded_by`), so deleting it reopens them (`reopen_replaced`) without a scan.
REPLACES_FACTS = "replaces_facts_json"
# A fact written before successors recorded it (older data) is found by reading its scope instead:
# the facts whose `superseded_by` names it among the scope's first OLD_SUCCESSOR_SCANNED, oldest
# id first, in pages of _SCOPE_PAGE (bounded work per delete, whatever the scope holds).
OLD_SUCCESSOR_SCANNED = 500
_SCOPE_PAGE = 100


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
    candidates = {memory.memory_id: memory for memory in young(engine, tenant, thread)}
    for hit in hits:
        if hit.doc_id not in candidates and (memory := engine.store.get_memory(tenant, hit.doc_id)):
            candidates[hit.doc_id] = memory
    found = [
        (memory, euclidean(vector, memory.embedding))
        for memory in candidates.values()
        # The scope check guards against a stale index entry or a (128-bit) key collision; a
        # retired fact is history (read by name or through its revisions), not a current fact.
        if memory.visible_scope == dict(scope) and memory.life.invalid_at is None
    ]
    found.sort(key=lambda pair: (pair[1], pair[0].memory_id))
    return found[:k]


def young(engine: Engine, tenant: str, thread: str) -> list[Memory]:
    """The thread's memories created too recently for every index search to show them: read from
    the store, so a fact is found the moment its create answered (read-your-writes) on an index
    that shows writes late (OpenSearch: `ports.EventuallyConsistent`). None where writes show at
    once. Memory ids sort by creation time, so one keyset read from the cut-off second finds them."""
    index = engine.index
    settle = index.settle_seconds if isinstance(index, EventuallyConsistent) else 0.0
    if settle <= 0:
        return []
    since = engine.clock.now().astimezone(UTC) - timedelta(seconds=settle)
    # An id of that second with nothing after its '_' sorts before every id made in it.
    return engine.store.list_thread_memories(tenant, thread, f"{since:%Y%m%d_%H%M%S}_", YOUNG_FACTS)


def create(
    engine: Engine,
    tenant: str,
    scope: Mapping[str, str],
    texts: Sequence[str],
    origin: Mapping[str, str | int | float] | None = None,
    stated_at: datetime | None = None,
    *,
    expires_at: datetime | None = None,
) -> list[Memory]:
    """Store each text as a new fact of the scope (embedded in one call) and index them; each is
    valid from `stated_at` (event time), else from now, and stops existing at `expires_at` when
    given."""
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
            expires_at=expires_at,
            life=MemoryLife(valid_from=stated_at or now),
        )
        if engine.store.save_memory(memory):
            created.append(memory)
    _index(engine, created)
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
    are added, changed ones updated in place (same id, the earlier wording kept as a revision),
    contradicted ones retired (kept as history with `invalid_at`, reported DELETED), repeated ones
    left alone; a fact that reads as orders to a model (`injection.is_instruction`) is neither
    added nor written over another. Engine memories of the scope are never touched.

    What a model's extraction cost (`FactExtraction.spent`) is logged once per call and written
    on the facts it creates or updates, as an extraction's on its memory; a failed call's error
    carries it (`spent`), for the worker's log and dead letter."""
    from memory_engine.extraction.injection import is_instruction

    said = [message for message in messages if message.strip()]
    if not said:
        return []
    candidates = nearest(engine, tenant, scope, "\n".join(said), MERGE_CANDIDATES)
    existing = {memory.memory_id: memory for memory, _ in candidates if memory.is_fact}
    extraction = engine.facts.extract_facts(
        said, [(memory_id, memory.content) for memory_id, memory in existing.items()], language
    )
    operations = [
        op
        for op in extraction.operations
        # An extractor (a model above all) may take an order for a fact: it is never kept as one,
        # so it cannot reach a chat model's prompt dressed as something remembered.
        if op.op not in ("add", "update") or not is_instruction(op.fact)
    ]
    spent = extraction.spent
    if spent:
        # Counted once per call, whatever it changed (the facts it writes carry it too).
        log.info("facts extracted", extra={"operations": len(operations), **spent})
    changes: list[FactChange] = []
    written = {**(origin or {}), **spent}
    updates = [(existing[op.id], op.fact) for op in operations if op.op == "update" and op.id in existing]
    retiring = [op.id for op in operations if op.op == "delete" and op.id in existing]
    if updates:
        vectors = engine.embedder.embed([text for _, text in updates], mode="passage")
        for (old, text), vector in zip(updates, vectors, strict=True):
            # The first fact written is the retired ones' successor: it names them.
            names = {REPLACES_FACTS: json.dumps(retiring)} if retiring and not changes else {}
            changes.extend(_update(engine, old, (text, vector), {**spent, **names}, {**written, **names}))
    # What a retired fact's `superseded_by` names: the fact that now states its slot, if one does.
    successor = next((change.memory.memory_id for change in changes), None)
    for op in operations:
        if op.op == "delete" and op.id in existing:
            changes.extend(_retire(engine, existing[op.id], successor))
    added = create(engine, tenant, scope, [op.fact for op in operations if op.op == "add"], written)
    changes.extend(FactChange("CREATED", memory) for memory in added)
    return changes


def _index(engine: Engine, memories: Sequence[Memory]) -> None:
    from memory_engine.indexing.documents import index_document

    engine.index.upsert([index_document(memory) for memory in memories])


def _update(
    engine: Engine,
    old: Memory,
    said: tuple[str, list[float]],
    spent: Mapping[str, str | int | float],
    written: Mapping[str, str | int | float],
) -> list[FactChange]:
    """Reword `old` as `text`, over the life just read, as a PATCH does: when a correction or
    another merge changed it meanwhile, it is read again and reworded over that (whose wording
    becomes a revision too). Retired meanwhile, it stays history and `text` is a new fact (with
    `written`, as the merge's new facts)."""
    text, vector = said

    def attempt(old: Memory) -> list[FactChange] | Lost[Memory]:
        if old.life.invalid_at is not None:
            added = create(engine, old.tenant, old.scope, [text], written)
            return [FactChange("CREATED", memory) for memory in added]
        new = reworded(old, text, vector, engine.clock.now(), "update")
        new = new.model_copy(update={"metadata": {**new.metadata, **spent}})
        if engine.store.update_memory(new, expected_life=old.life):
            _index(engine, [new])
            return [FactChange("UPDATED", new)]
        return read_again(engine, old, gone=[])  # deleted meanwhile: nothing to update

    return compare_and_set(old, attempt, gave_up=_kept_changing)


def reworded(old: Memory, text: str, vector: list[float], now: datetime, reason: EndReason) -> Memory:
    """The fact `old` with its new wording `text` (valid from `now`); the earlier wording is kept
    as its last revision."""
    revision = FactRevision(fact=old.content, valid_from=old.stated_at, invalid_at=now, reason=reason)
    life = old.life.model_copy(update={"valid_from": now, "revisions": [*old.life.revisions, revision]})
    metadata = {**old.metadata, "updated_at": rfc3339(now)}
    return old.model_copy(
        update={"fields": MemoryFields(summary=text), "embedding": vector, "metadata": metadata, "life": life}
    )


def retired(memory: Memory, now: datetime, reason: EndReason, successor: str | None = None) -> Memory:
    """The fact marked as no longer holding from `now` (replaced by `successor`, if named)."""
    life = memory.life.model_copy(
        update={"invalid_at": now, "superseded_by": successor, "end_reason": reason}
    )
    return memory.model_copy(
        update={"life": life, "metadata": {**memory.metadata, "updated_at": rfc3339(now)}}
    )


def _retire(engine: Engine, memory: Memory, successor: str | None) -> list[FactChange]:
    """A contradicted fact stops holding but is never lost: it stays stored, out of the scope's
    current facts (`nearest`, the bank's listing), readable by name and through its revisions."""

    def attempt(memory: Memory) -> list[FactChange] | Lost[Memory]:
        if memory.life.invalid_at is not None:
            return []  # retired meanwhile (a PATCH, another merge): history already
        old = retired(memory, engine.clock.now(), "contradiction", successor)
        # Over the life just read, as an update: a correction that landed meanwhile is retired
        # with its wording, never written over.
        if engine.store.update_memory(old, expected_life=memory.life):
            return [FactChange("DELETED", old)]
        return read_again(engine, memory, gone=[])  # deleted meanwhile

    return compare_and_set(memory, attempt, gave_up=_kept_changing)


def reopen_replaced(engine: Engine, removed: Sequence[Memory]) -> list[Memory]:
    """After the facts `removed` were deleted (by name, or expired and swept): each fact a merge
    retired as replaced by one of them (`REPLACES_FACTS`; for older data, found in the scope:
    `_replaced_by`), and still marked so, holds again. Each a compare-and-set on its life, as a
    retirement is; run again, it changes nothing. Returns the facts reopened; reads nothing for
    a fact that replaced none and that no merge reworded."""
    reopened: list[Memory] = []
    for gone in removed:
        for fact_id in _replaced_by(engine, gone) if gone.is_fact else []:
            fact = engine.store.get_memory(gone.tenant, str(fact_id))
            if fact is not None and (holds := _reopen(engine, fact, gone.memory_id)) is not None:
                reopened.append(holds)
    return reopened


def _reopen(engine: Engine, fact: Memory, replacer: str) -> Memory | None:
    """The fact holding again, stored, while it is still marked as replaced by `replacer`; None
    when it is not (or no longer), was deleted meanwhile, or kept changing (left as it is)."""

    def attempt(fact: Memory) -> Memory | Lost[Memory] | None:
        if fact.life.superseded_by != replacer:
            return None
        life = fact.life.model_copy(update={"invalid_at": None, "superseded_by": None, "end_reason": None})
        holds = fact.model_copy(
            update={"life": life, "metadata": {**fact.metadata, "updated_at": rfc3339(engine.clock.now())}}
        )
        if engine.store.update_memory(holds, expected_life=fact.life):
            return holds
        return read_again(engine, fact, gone=None)

    # Kept changing: left as it is, unlike a merge's writes, which answer a Conflict.
    return compare_and_set(fact, attempt, gave_up=lambda _: None)


def _replaced_by(engine: Engine, gone: Memory) -> list[str]:
    """The ids of the facts a merge retired as replaced by the fact `gone`: what it recorded
    (`REPLACES_FACTS`), else, for a fact a merge reworded before successors recorded it, those
    of its scope whose `superseded_by` names it (a bounded read of the scope). A merge names as
    successor only a fact it rewords: one never reworded replaced nothing, and reads nothing."""
    named = gone.metadata.get(REPLACES_FACTS)
    if isinstance(named, str):
        return [str(fact_id) for fact_id in json.loads(named)]
    if not any(revision.reason == "update" for revision in gone.life.revisions):
        return []
    found: list[str] = []
    after: str | None = None
    for _ in range(OLD_SUCCESSOR_SCANNED // _SCOPE_PAGE):
        page = engine.store.list_thread_memories(gone.tenant, gone.parent_session_uuid, after, _SCOPE_PAGE)
        found += [
            fact.memory_id for fact in page if fact.is_fact and fact.life.superseded_by == gone.memory_id
        ]
        if len(page) < _SCOPE_PAGE:
            break
        after = page[-1].memory_id
    return found


def _kept_changing(memory: Memory) -> NoReturn:
    raise Conflict(
        f"memories/{memory.memory_id} kept changing while this request merged into it (corrected or "
        "retired by other requests each time it was read); send the events again.",
        [{"field": "scope", "message": "a fact of the scope changed meanwhile"}],
    )
