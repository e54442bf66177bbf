"""Find the few memories (and still-buffered turns) that matter for the next reply."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

from memory_engine.engine import Engine
from memory_engine.models.api import RetrievedMemory, RetrieveRequest, RetrieveResponse
from memory_engine.models.domain import Memory, Turn
from memory_engine.retrieval.bm25 import bm25_scores
from memory_engine.retrieval.dates import DateMention, date_match, named_dates
from memory_engine.retrieval.fusion import MemoryEvidence, TurnEvidence, fuse
from memory_engine.retrieval.text import tokenize
from memory_engine.usecases import turn_vectors
from memory_engine.usecases.indexing import turn_lexical_text


@dataclass(frozen=True)
class Evidence:
    """Everything fusion ranks, gathered for one request (the benchmark replays fusion over it)."""

    memories: list[MemoryEvidence]
    turns: list[TurnEvidence]
    memory_ids: frozenset[str]
    buffered: dict[str, Turn]  # ranking key -> still-buffered turn


def run(engine: Engine, tenant: str, request: RetrieveRequest) -> RetrieveResponse:
    """Dense + lexical candidates over memories, their turns and buffered turns, fused (see
    `retrieval.fusion`).

    Memories built only from dialogs the caller already has (recent_dialogs, last_dialog_uuid)
    and those dialogs themselves are left out.
    """
    evidence = gather(engine, tenant, request)
    ranked = fuse(evidence.memories, evidence.turns, engine.retrieval.weights, evidence.memory_ids)
    limit = min(request.options.limit, engine.settings.retrieve_max_limit)
    hits = _first_hits(engine, tenant, ranked, evidence.buffered, request.excluded_dialogs(), limit)
    return RetrieveResponse(data=list(hits))


def gather(engine: Engine, tenant: str, request: RetrieveRequest) -> Evidence:
    """Candidates from the index (memory and turn documents) and the buffered turns, with scores."""
    query = request.user_input.query
    threads = list(dict.fromkeys(request.parent_session_uuids))
    excluded = request.excluded_dialogs()
    limit = min(request.options.limit, engine.settings.retrieve_max_limit)
    config = engine.retrieval
    vector = engine.embedder.embed([query], mode="query")[0]

    memory_hits = engine.index.search(
        tenant, threads, query, vector, max(config.memory_candidates, limit * 4), kind="memory"
    )
    turn_hits = []
    if config.turn_documents:
        turn_k = max(config.turn_candidates, limit * 4)
        turn_hits = engine.index.search(tenant, threads, query, vector, turn_k, kind="turn")
    dates = named_dates(query)
    turns = [
        TurnEvidence(hit.memory_id, hit.dense, hit.lexical, date_match(hit.occurred_at, dates))
        for hit in turn_hits
        if hit.memory_id
    ]
    buffered = {
        _turn_key(turn): turn
        for turn in engine.store.buffered_turns_in_threads(tenant, threads)
        if turn.dialog_uuid not in excluded
    }
    turns.extend(_buffered_evidence(engine, buffered, query, vector, dates))
    return Evidence(
        memories=[MemoryEvidence(hit.doc_id, hit.dense, hit.lexical) for hit in memory_hits],
        turns=turns,
        memory_ids=frozenset(
            [hit.doc_id for hit in memory_hits] + [hit.memory_id for hit in turn_hits if hit.memory_id]
        ),
        buffered=buffered,
    )


def _first_hits(
    engine: Engine,
    tenant: str,
    ranked: list[tuple[str, float]],
    turns: dict[str, Turn],
    excluded: set[str],
    limit: int,
) -> Iterator[RetrievedMemory]:
    """Shape the best units; memories are read from the store only as far down as needed, the
    ones that could fill the remaining places in one read (one BatchGetItem on DynamoDB)."""
    given = 0
    read: dict[str, Memory] = {}
    asked: set[str] = set()
    for position, (key, score) in enumerate(ranked):
        if given == limit:
            return
        turn = turns.get(key)
        if turn is not None:
            given += 1
            yield _turn_hit(turn, score)
            continue
        if key not in asked:
            unread = (k for k, _ in islice(ranked, position, None) if k not in turns and k not in asked)
            window = list(islice(unread, limit - given))
            read.update(engine.store.get_memories(tenant, window))
            asked.update(window)
        memory = read.get(key)
        # Deleted since it was indexed, or the caller already has all of it (a fact has no dialogs).
        if memory is None or (memory.source_dialog_uuids and set(memory.source_dialog_uuids) <= excluded):
            continue
        given += 1
        yield _memory_hit(memory, score)


def _turn_key(turn: Turn) -> str:
    return f"turn:{turn.session_uuid}:{turn.dialog_uuid}"


def _buffered_evidence(
    engine: Engine, turns: dict[str, Turn], query: str, vector: list[float], dates: list[DateMention]
) -> list[TurnEvidence]:
    """Buffered turns are not indexed yet: score them here, BM25 over the buffered set itself."""
    if not turns:
        return []
    config = engine.retrieval
    lexical = bm25_scores(
        {key: list(_terms(turn_lexical_text(turn, config))) for key, turn in turns.items()}, tokenize(query)
    )
    # Stored with the turn by the worker, or cached; at most a budget embedded here (turn_vectors).
    vectors = turn_vectors.for_query(engine, turns, engine.settings.retrieve_embed_budget)
    return [
        TurnEvidence(
            key,
            _dot(vector, vectors[key]) if key in vectors else 0.0,
            lexical.get(key, 0.0),
            date_match(turn.timestamp, dates),
        )
        for key, turn in turns.items()
    ]


def _dot(a: list[float], b: list[float]) -> float:
    return sum(map(operator.mul, a, b))


@lru_cache(maxsize=4096)
def _terms(text: str) -> tuple[str, ...]:
    """A buffered turn is analysed once, not once per query, while it stays buffered."""
    return tuple(tokenize(text))


def _memory_hit(memory: Memory, score: float) -> RetrievedMemory:
    return RetrievedMemory(
        memory_id=memory.memory_id,
        content=memory.content,
        score=score,
        kind="memory",
        session_uuid=memory.session_uuid,
        source_dialog_uuids=memory.source_dialog_uuids,
    )


def _turn_hit(turn: Turn, score: float) -> RetrievedMemory:
    return RetrievedMemory(
        memory_id=turn.dialog_uuid,
        content=turn.text(),
        score=score,
        kind="dialog",
        session_uuid=turn.session_uuid,
        source_dialog_uuids=[turn.dialog_uuid],
    )
