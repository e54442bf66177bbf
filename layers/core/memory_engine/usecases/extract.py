"""The worker's use case: turn a session's buffered turns into memories, one per batch."""

from __future__ import annotations

import json

from memory_engine.engine import Engine
from memory_engine.extraction.batching import cut_batches, extraction_point
from memory_engine.extraction.registry import update_registry
from memory_engine.indexing import turn_vectors
from memory_engine.indexing.documents import embedding_text, extraction_text, window_texts
from memory_engine.models.domain import Memory, Session, Turn, new_memory_id
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import ExtractionContext
from memory_engine.usecases import index_purge


def run(engine: Engine, job: ExtractionJob, redelivered: bool = False) -> list[Memory]:
    """Extract every batch the job allows; returns the memories this run wrote.

    Safe to run twice for the same job: the store writes a memory only while all its turns are
    still buffered, so a retry or a duplicate delivery finds them claimed and writes nothing.
    A `redelivered` job (an earlier run failed, perhaps after its store write) first indexes the
    session's memories again, so an index write that failed after the store write is healed, and
    then takes every complete batch, as the interrupted run would have.
    """
    session = engine.store.get_session(job.tenant, job.session_uuid)
    if session is None:
        return []
    if redelivered:
        memories = engine.store.list_memories(job.tenant, job.session_uuid)
        index_purge.index_written(engine, memories)
    stored = engine.store.buffered_turns(job.tenant, job.session_uuid)
    buffered = turn_vectors.embedded(engine, stored)
    # The turns that stay buffered get their vectors stored whatever happens (an LLM outage
    # included): retrieve reads them; those extracted now leave the buffer and need none.
    unstored = {turn.dialog_uuid for turn in stored if turn.embedding is None}
    try:
        return _extract_batches(engine, job, session, buffered, redelivered, unstored)
    finally:
        turn_vectors.store(engine, [turn for turn in buffered if turn.dialog_uuid in unstored])


def _extract_batches(
    engine: Engine,
    job: ExtractionJob,
    session: Session,
    buffered: list[Turn],
    redelivered: bool,
    unstored: set[str],
) -> list[Memory]:
    settings = engine.settings
    # A retry finishes what the failed run started: the batches it did write took the buffer
    # under the threshold, but the job was queued for every complete batch.
    threshold = 0 if redelivered else settings.extraction_threshold
    batches = cut_batches(buffered, settings.batch_size, threshold, job.force)
    written: list[Memory] = []
    for batch in batches:
        registry = engine.store.get_characters(job.tenant, session.parent_session_uuid)
        memory = _extract_one(engine, session, batch, registry)
        if engine.store.save_memory(memory):
            found = characters_found(memory)
            if found:
                merged = update_registry(registry, found)
                engine.store.save_characters(job.tenant, session.parent_session_uuid, merged)
            unstored.difference_update(turn.dialog_uuid for turn in batch)
            index_purge.index_written(engine, [memory], batch)
            written.append(memory)
    if batches:
        _queue_what_arrived_meanwhile(engine, job)
    return written


def _queue_what_arrived_meanwhile(engine: Engine, job: ExtractionJob) -> None:
    """Turns consolidated while this run worked never crossed the threshold (the buffer was
    above it all along), so no job was queued for them: queue one if a batch's worth is waiting."""
    settings = engine.settings
    waiting = len(engine.store.buffered_turns(job.tenant, job.session_uuid))
    if waiting >= extraction_point(settings.extraction_threshold, settings.batch_size):
        engine.queue.send(ExtractionJob(tenant=job.tenant, session_uuid=job.session_uuid))


def characters_found(memory: Memory) -> dict[str, list[str]]:
    """The batch's characters with aliases: the LLM's map when it gave one, else the names."""
    encoded = memory.metadata.get("characters_json")
    if isinstance(encoded, str) and encoded:
        decoded = json.loads(encoded)
        if isinstance(decoded, dict):
            return {str(name): [str(alias) for alias in aliases] for name, aliases in decoded.items()}
    return {name: [] for name in memory.fields.characters}


def _extract_one(
    engine: Engine, session: Session, batch: list[Turn], registry: dict[str, list[str]]
) -> Memory:
    first = batch[0]
    context = ExtractionContext(
        user_name=first.user_name,
        language=session.language,
        length_limit=max(turn.length_limit for turn in batch),
        known_characters=registry,
    )
    extraction = engine.extractor.extract(batch, context)
    created_at = engine.clock.now()
    draft = Memory(
        tenant=first.tenant,
        memory_id=new_memory_id(created_at),
        session_uuid=first.session_uuid,
        parent_session_uuid=session.parent_session_uuid,
        fields=extraction.fields,
        source_dialog_uuids=[turn.dialog_uuid for turn in batch],
        first_seq=batch[0].seq,
        last_seq=batch[-1].seq,
        source_text=extraction_text(batch),
        created_at=created_at,
        metadata=extraction.metadata,
    )
    # The turns' vectors (searched as turn documents) were stored with them before extraction;
    # their windows' vectors are made here, in the memory's one call to the embedder.
    stored = [turn.embedding for turn in batch if turn.embedding is not None]
    if not engine.retrieval.turn_documents or len(stored) != len(batch):
        stored = []
    windows = window_texts(batch) if stored and engine.retrieval.window_vectors else []
    [vector, *window_vectors] = engine.embedder.embed([embedding_text(draft), *windows], mode="passage")
    update = {"embedding": vector, "turn_embeddings": stored, "window_embeddings": window_vectors}
    return draft.model_copy(update=update)
