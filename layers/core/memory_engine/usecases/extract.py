"""The worker's use case: turn a session's buffered turns into memories, one per batch."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import datetime, timedelta

from memory_engine import deadline
from memory_engine.embedding import CHUNK_CHARS, embedded_chars
from memory_engine.engine import Engine
from memory_engine.extraction.batching import cut_batches, extraction_point
from memory_engine.extraction.budget import JobBudget
from memory_engine.extraction.event_dates import event_dates
from memory_engine.extraction.registry import update_registry
from memory_engine.indexing.documents import (
    embedding_text,
    extraction_text,
    turn_embedding_text,
    window_texts,
)
from memory_engine.models.domain import Memory, MemoryFields, Session, Turn, new_memory_id
from memory_engine.models.life import MemoryLife
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import ExtractionContext, ReadsCurrentFacts
from memory_engine.usecases import index_purge, supersede, turn_vectors

log = logging.getLogger("memory_engine.worker")


def run(engine: Engine, job: ExtractionJob, redelivered: bool = False) -> list[Memory]:
    """Extract every batch the job allows, within its budget; returns the memories this run wrote.

    Safe to run twice for the same job: the store writes a memory only while all its turns are
    still buffered, so a retry or a duplicate delivery finds them claimed and writes nothing.
    A `redelivered` job (an earlier run failed, perhaps after its store write) first indexes the
    session's memories again and adds their statements to the thread's record (supersession),
    so an index or record write that failed after the store write is healed, and then takes
    every complete batch, as the interrupted run would have. A job that reaches its
    budget (`extraction.budget`) queues the batches it leaves as a job of their own and returns.
    """
    session = engine.store.get_session(job.tenant, job.session_uuid)
    if session is None:
        return []
    if redelivered:
        memories = engine.store.list_memories(job.tenant, job.session_uuid)
        index_purge.index_written(engine, memories)
        # A run that died after its store write never recorded the memory's statements: they
        # join the thread's record now (idempotent for those already there).
        supersede.supersede_copies(engine, memories)
    stored = engine.store.buffered_turns(job.tenant, job.session_uuid)
    budget = JobBudget.of(engine.limits)
    buffered = _embedded(engine, stored, budget)
    # The turns that stay buffered get their vectors stored whatever happens (an LLM outage
    # included): retrieve reads them; those extracted now leave the buffer and need none.
    unstored = {turn.dialog_uuid for turn in stored if turn.embedding is None}
    try:
        return _extract_batches(
            engine, job, session, _batches(engine, job, buffered, redelivered), unstored, budget
        )
    finally:
        turn_vectors.store(engine, [turn for turn in buffered if turn.dialog_uuid in unstored])


def _batches(engine: Engine, job: ExtractionJob, buffered: list[Turn], redelivered: bool) -> list[list[Turn]]:
    limits = engine.limits
    if job.through_seq is not None:  # what a job that reached its budget left
        within = [turn for turn in buffered if turn.seq <= job.through_seq]
        return cut_batches(within, limits.batch_size, 0, job.force)
    # A retry finishes what the failed run started: the batches it did write took the buffer
    # under the threshold, but the job was queued for every complete batch.
    threshold = 0 if redelivered else limits.extraction_threshold
    return cut_batches(buffered, limits.batch_size, threshold, job.force)


def _embedded(engine: Engine, stored: list[Turn], budget: JobBudget) -> list[Turn]:
    """`stored` with the vectors they have, and the missing ones embedded in session order while
    the job's budget lasts: the oldest turns are the ones its batches take. The first batch's
    turns are no exception (long ones take seconds each on a small machine): a job embeds at
    least one chunk, so it makes progress, and leaves the rest, with its batches, to the job that
    continues it (the vectors made are stored either way)."""
    cap = engine.limits.embed_max_chars
    done: dict[str, Turn] = {}
    pending: list[Turn] = []
    size = 0

    def embed_pending() -> None:
        nonlocal size
        done.update((turn.dialog_uuid, turn) for turn in turn_vectors.embedded(engine, pending))
        budget.spend(size)
        pending.clear()
        size = 0

    for turn in sorted(stored, key=lambda turn: turn.seq):
        if turn.embedding is not None:
            continue
        chars = min(len(turn_embedding_text(turn)), cap)
        if pending and size + chars > CHUNK_CHARS:
            embed_pending()  # in chunks, so the time budget is asked between them
        if done and budget.over(size + chars):
            break
        pending.append(turn)
        size += chars
    if pending:
        embed_pending()
    return [done.get(turn.dialog_uuid, turn) for turn in stored]


def _extract_batches(
    engine: Engine,
    job: ExtractionJob,
    session: Session,
    batches: list[list[Turn]],
    unstored: set[str],
    budget: JobBudget,
) -> list[Memory]:
    written: list[Memory] = []
    for batch in batches:
        if budget.exhausted() or any(turn.embedding is None for turn in batch):
            _queue_the_rest(engine, job, batches[-1][-1].seq, len(written))
            return written
        deadline.check()  # the worker is stopping: the job is released, the batch redone later
        began = budget.clock()
        registry = engine.store.get_characters(job.tenant, session.parent_session_uuid)
        memory = _extract_one(engine, session, batch, registry, budget)
        # Indexed before the store takes its turns out of the buffer (index_purge.claim_indexed).
        if index_purge.claim_indexed(engine, memory, batch):
            found = characters_found(memory)
            if found:
                merged = update_registry(registry, found)
                engine.store.save_characters(job.tenant, session.parent_session_uuid, merged)
            unstored.difference_update(turn.dialog_uuid for turn in batch)
            # Later statements replace earlier ones of the same fact (kept as history).
            changed = {m.memory_id: m for m in supersede.supersede(engine, memory)}
            written.append(changed.get(memory.memory_id, memory))
        budget.batch_done(began)
    if batches:
        _queue_what_arrived_meanwhile(engine, job)
    return written


def _queue_the_rest(engine: Engine, job: ExtractionJob, through_seq: int, done: int) -> None:
    """Leave the batches up to `through_seq` to a new job, queued behind the jobs waiting now."""
    engine.queue.send(
        ExtractionJob(
            tenant=job.tenant, session_uuid=job.session_uuid, force=job.force, through_seq=through_seq
        )
    )
    log.info("extraction job reached its budget after %d batches; the rest queued", done)


def _queue_what_arrived_meanwhile(engine: Engine, job: ExtractionJob) -> None:
    """Turns consolidated while this run worked never crossed the threshold (the buffer was
    above it all along), so no job was queued for them: queue one if a batch's worth is waiting."""
    limits = engine.limits
    waiting = len(engine.store.buffered_turns(job.tenant, job.session_uuid))
    if waiting >= extraction_point(limits.extraction_threshold, limits.batch_size):
        engine.queue.send(ExtractionJob(tenant=job.tenant, session_uuid=job.session_uuid))


def characters_found(memory: Memory) -> dict[str, list[str]]:
    """The batch's characters with aliases: the LLM's map when it gave one, else the names."""
    return found_characters(memory.fields, memory.metadata)


def found_characters(fields: MemoryFields, metadata: Mapping[str, object]) -> dict[str, list[str]]:
    """`characters_found` of an extraction not yet stored (its fields and metadata)."""
    encoded = metadata.get("characters_json")
    if isinstance(encoded, str) and encoded:
        decoded = json.loads(encoded)
        if isinstance(decoded, dict):
            return {str(name): [str(alias) for alias in aliases] for name, aliases in decoded.items()}
    return {name: [] for name in fields.characters}


def _extract_one(
    engine: Engine,
    session: Session,
    batch: list[Turn],
    registry: dict[str, list[str]],
    budget: JobBudget | None = None,
) -> Memory:
    first = batch[0]
    extractor = engine.extractor
    shown = extractor.current_facts_wanted() if isinstance(extractor, ReadsCurrentFacts) else 0
    context = ExtractionContext(
        user_name=first.user_name,
        language=session.language,
        length_limit=max(turn.length_limit for turn in batch),
        known_characters=registry,
        # What the thread says now, for the extractor to mark what the batch updates.
        current_facts=supersede.current_facts(engine, first.tenant, session.parent_session_uuid, shown),
    )
    extraction = engine.extractor.extract(batch, context)
    # Relative dates ("yesterday", "지난달") fixed against each turn's own time, whatever extracted.
    spoken_of = event_dates(batch)
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
        # Event time: when its facts were said, not when the worker got to them.
        life=MemoryLife(valid_from=min(turn.timestamp for turn in batch), event_dates=spoken_of),
        expires_at=_expiry(batch, created_at),
    )
    # The turns' vectors (searched as turn documents) were stored with them before extraction;
    # their windows' vectors are made here, in the memory's one call to the embedder.
    stored = [turn.embedding for turn in batch if turn.embedding is not None]
    if not engine.retrieval.turn_documents or len(stored) != len(batch):
        stored = []
    windows = (
        window_texts(batch, engine.limits.embed_max_chars)
        if stored and engine.retrieval.window_vectors
        else []
    )
    texts = [embedding_text(draft), *windows]
    if budget is not None:
        budget.spend(embedded_chars(texts, engine.limits.embed_max_chars))
    [vector, *window_vectors] = engine.embedder.embed(texts, mode="passage")
    update = {"embedding": vector, "turn_embeddings": stored, "window_embeddings": window_vectors}
    return draft.model_copy(update=update)


def _expiry(batch: list[Turn], created_at: datetime) -> datetime | None:
    """A memory of turns sent with `memory_ttl_seconds` expires after the shortest of them."""
    ttls = [turn.memory_ttl_seconds for turn in batch if turn.memory_ttl_seconds is not None]
    return created_at + timedelta(seconds=min(ttls)) if ttls else None
