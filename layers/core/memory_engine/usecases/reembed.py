"""Re-embed every stored memory with the configured model (after changing the embedder).

The store keeps each memory's vectors, and a plain reindex copies them into the search index as
they are. Vectors of two models are not comparable even when their dimensions agree (MiniLM and
multilingual-e5-small both have 384): a store written with one model and queried with another
ranks by noise. `memory-engine reindex --reembed` runs this first, then rebuilds the index.

Buffered turns keep the vector the worker stored for them (`Turn.embedding`): those are re-embedded
too, so a turn said before the switch and not yet extracted is scored by the new model's vector,
and no vector of the old length is left anywhere (a switch to EmbeddingGemma changes 384 to 768).
"""

from __future__ import annotations

from collections.abc import Callable

from memory_engine.indexing.documents import embedding_text, turn_embedding_text, window_texts
from memory_engine.models.domain import Memory
from memory_engine.ports import Embedder, Store

_CHUNK = 32  # memories per model call group: bounded memory, steady progress


def reembed(
    store: Store,
    embedder: Embedder,
    tenant: str | None = None,
    progress: Callable[[int], None] | None = None,
    max_chars: int | None = None,
) -> int:
    """Give every stored memory (of one tenant, or all) new vectors from `embedder`: its own, and
    one per source turn and one per turn's window when it had turn vectors (windows cut for the
    embedder's `max_chars` as extraction cuts them). Returns how many memories were rewritten."""
    count = 0
    pending: list[Memory] = []
    for memory in store.iter_memories(tenant):
        pending.append(memory)
        if len(pending) >= _CHUNK:
            count += rewrite(store, embedder, pending, max_chars)
            pending = []
            if progress:
                progress(count)
    if pending:
        count += rewrite(store, embedder, pending, max_chars)
    if progress:
        progress(count)
    reembed_buffered(store, embedder, tenant)
    return count


def reembed_buffered(store: Store, embedder: Embedder, tenant: str | None = None) -> int:
    """New vectors for every buffered turn that has a stored one (of one tenant, or all), one
    session at a time; returns how many were written. A turn without a vector is left to the
    worker, which embeds it with the configured model anyway."""
    written = 0
    for buffer in store.buffers():
        owner, session_uuid = buffer.tenant, buffer.session_uuid
        if tenant is not None and owner != tenant:
            continue
        turns = [turn for turn in store.buffered_turns(owner, session_uuid) if turn.embedding is not None]
        if not turns:
            continue
        vectors = embedder.embed([turn_embedding_text(turn) for turn in turns], mode="passage")
        update = {turn.dialog_uuid: vector for turn, vector in zip(turns, vectors, strict=True)}
        written += store.save_turn_vectors(owner, session_uuid, update)
    return written


def rewrite(
    store: Store, embedder: Embedder, memories: list[Memory], max_chars: int | None, with_turns: bool = False
) -> int:
    """Give these stored memories new vectors from `embedder` in one call; `with_turns` gives
    every memory of a session turn and window vectors, whether it had some or not (an import:
    its memories come without vectors). Returns how many were rewritten."""
    texts: list[str] = []
    # Per memory: where its own text, its turns' and its windows' start in `texts`, and the end.
    spans: list[tuple[int, int, int, int]] = []
    for memory in memories:
        start = len(texts)
        texts.append(embedding_text(memory))
        windows_at = len(texts)
        if (memory.turn_embeddings or with_turns) and memory.session_uuid:
            # Turn vectors exist only for memories extracted with turn documents; keep it so. They
            # pair with source_dialog_uuids by position: a turn no longer stored gets the memory's
            # own text, as the index falls back to the memory's vector for it.
            turns = store.list_turns(memory.tenant, memory.session_uuid)
            by_uuid = {turn.dialog_uuid: turn for turn in turns}
            texts.extend(
                turn_embedding_text(by_uuid[uuid]) if uuid in by_uuid else texts[start]
                for uuid in memory.source_dialog_uuids
            )
            windows_at = len(texts)
            # and its turns' windows, cut as extraction cuts them (also for a memory written before
            # window vectors: a re-embed is how an older store gets them); a memory whose turns
            # are no longer all stored gets none (its turns are scored by their own vectors)
            batch = [by_uuid[uuid] for uuid in memory.source_dialog_uuids if uuid in by_uuid]
            if len(batch) == len(memory.source_dialog_uuids):
                texts.extend(window_texts(batch, max_chars))
        spans.append((start, start + 1, windows_at, len(texts)))
    vectors = embedder.embed(texts, mode="passage")
    written = 0
    for memory, (start, turns_at, windows_at, end) in zip(memories, spans, strict=True):
        update = {
            "embedding": vectors[start],
            "turn_embeddings": vectors[turns_at:windows_at],
            "window_embeddings": vectors[windows_at:end],
        }
        written += store.update_memory(memory.model_copy(update=update))
    return written
