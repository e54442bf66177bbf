"""Find the few memories (and still-buffered turns) that matter for the next reply."""

from __future__ import annotations

import hashlib

from memory_engine.engine import Engine
from memory_engine.models.api import RetrievedMemory, RetrieveRequest, RetrieveResponse
from memory_engine.models.domain import Memory, Turn
from memory_engine.retrieval.bm25 import bm25_scores
from memory_engine.retrieval.fusion import Candidate, FusionWeights, fuse
from memory_engine.retrieval.text import tokenize

CANDIDATES_PER_RETRIEVER = 50


def run(engine: Engine, tenant: str, request: RetrieveRequest) -> RetrieveResponse:
    """Dense + lexical candidates over memories and buffered turns of the threads, fused.

    Memories built only from dialogs the caller already has (recent_dialogs, last_dialog_uuid)
    and those dialogs themselves are left out.
    """
    query = request.user_input.query
    threads = list(dict.fromkeys(request.parent_session_uuids))
    excluded = request.excluded_dialogs()
    limit = min(request.options.limit, engine.settings.retrieve_max_limit)
    vector = engine.embedder.embed([query], mode="query")[0]

    memories: dict[str, Memory] = {}
    candidates: list[Candidate] = []
    k = max(CANDIDATES_PER_RETRIEVER, limit * 4)
    for hit in engine.index.search(tenant, threads, query, vector, k):
        memory = engine.store.get_memory(tenant, hit.doc_id)
        # A memory built only from dialogs the caller has is left out; a fact has no dialogs.
        if memory is None or (memory.source_dialog_uuids and set(memory.source_dialog_uuids) <= excluded):
            continue
        memories[memory.memory_id] = memory
        candidates.append(Candidate(memory.memory_id, hit.dense, hit.lexical))

    turns = {
        _turn_key(turn): turn
        for turn in engine.store.buffered_turns_in_threads(tenant, threads)
        if turn.dialog_uuid not in excluded
    }
    candidates.extend(_turn_candidates(engine, turns, query, vector))

    ranked = fuse(candidates, FusionWeights())[:limit]
    return RetrieveResponse(data=[_shape(key, score, memories, turns) for key, score in ranked])


def _turn_key(turn: Turn) -> str:
    return f"turn:{turn.session_uuid}:{turn.dialog_uuid}"


def _turn_candidates(
    engine: Engine, turns: dict[str, Turn], query: str, vector: list[float]
) -> list[Candidate]:
    if not turns:
        return []
    lexical = bm25_scores({key: tokenize(turn.text()) for key, turn in turns.items()}, tokenize(query))
    vectors = _turn_vectors(engine, turns)
    return [
        Candidate(
            key, sum(a * b for a, b in zip(vector, vectors[key], strict=True)), lexical.get(key, 0.0), True
        )
        for key in turns
    ]


def _turn_vectors(engine: Engine, turns: dict[str, Turn]) -> dict[str, list[float]]:
    """Embed buffered turns once each; the cache key changes if the text does."""
    keys = {key: f"{key}:{hashlib.sha1(turn.text().encode()).hexdigest()}" for key, turn in turns.items()}
    found = {key: engine.turn_vectors.get(cache_key) for key, cache_key in keys.items()}
    missing = [key for key, vector in found.items() if vector is None]
    if missing:
        fresh = engine.embedder.embed([turns[key].text() for key in missing], mode="passage")
        for key, fresh_vector in zip(missing, fresh, strict=True):
            engine.turn_vectors.put(keys[key], fresh_vector)
            found[key] = fresh_vector
    return {key: vector for key, vector in found.items() if vector is not None}


def _shape(key: str, score: float, memories: dict[str, Memory], turns: dict[str, Turn]) -> RetrievedMemory:
    if key in memories:
        memory = memories[key]
        return RetrievedMemory(
            memory_id=memory.memory_id,
            content=memory.content,
            score=score,
            kind="memory",
            session_uuid=memory.session_uuid,
            source_dialog_uuids=memory.source_dialog_uuids,
        )
    turn = turns[key]
    return RetrievedMemory(
        memory_id=turn.dialog_uuid,
        content=turn.text(),
        score=score,
        kind="dialog",
        session_uuid=turn.session_uuid,
        source_dialog_uuids=[turn.dialog_uuid],
    )
