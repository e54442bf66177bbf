"""Find the few memories (and still-buffered turns) that matter for the next reply."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice

from memory_engine import deadline
from memory_engine.engine import Engine, VectorCache
from memory_engine.extraction.event_dates import event_dates
from memory_engine.indexing.documents import spoken_line, turn_lexical_text
from memory_engine.models.api import RetrievedMemory, RetrieveRequest, RetrieveResponse, TurnEvidence
from memory_engine.models.domain import Memory, Turn
from memory_engine.ports import DocKind
from memory_engine.retrieval import batches
from memory_engine.retrieval.bm25 import bm25_counted
from memory_engine.retrieval.features import (
    FoundTurn,
    MemoryCandidate,
    Query,
    TurnCandidate,
    memory_candidates,
    memory_lexical_share,
    turn_candidates,
)
from memory_engine.retrieval.fusion import RankedUnit, rank
from memory_engine.retrieval.packing import pack, smallest_piece
from memory_engine.retrieval.timeline import Window, wording
from memory_engine.usecases import retrieve_time, turn_terms, turn_vectors
from memory_engine.usecases.turn_vectors import cache_key


@dataclass(frozen=True)
class Gathered:
    """Every candidate fusion ranks, gathered for one request (the benchmark replays fusion over it)."""

    query: Query
    limit: int  # hits asked for, within MEMORY_ENGINE_RETRIEVE_MAX_LIMIT
    excluded: set[str]  # dialogs the caller already has (`RetrieveRequest.excluded_dialogs`)
    memories: list[MemoryCandidate]
    # The candidate turns of each source as it found them (index, then buffer): what `turns` was
    # built from, kept so the benchmark can build them again with another window share.
    sources: tuple[list[FoundTurn], ...]
    # Each source's BM25 that counts as 1 (`turn_candidates`' scale; None: the best of the source).
    scales: tuple[float | None, ...]
    turns: list[TurnCandidate]
    buffered: dict[str, Turn]  # ranking key -> still-buffered turn
    # Turn document id -> its text as indexed and when it was said; a hit's evidence shows the
    # line (`spoken_line`), made only for the turns of returned hits.
    lines: dict[str, tuple[str, datetime | None]]
    window: Window = field(default_factory=Window)
    history: bool = False  # options.history: retired facts are hits too

    @property
    def memory_ids(self) -> frozenset[str]:
        """The memories among the candidates, through their own document or one of their turns."""
        owners = {turn.memory_id for turn in self.turns if turn.memory_id}
        return frozenset(owners | {memory.memory_id for memory in self.memories})


def run(engine: Engine, tenant: str, request: RetrieveRequest) -> RetrieveResponse:
    """Dense + lexical candidates over memories, their turns and buffered turns, fused (see
    `retrieval.fusion`).

    Memories built only from dialogs the caller already has (recent_dialogs, last_dialog_uuid)
    and those dialogs themselves are left out.
    """
    gathered = gather(engine, tenant, request)
    weights = engine.retrieval.weights_for(request.user_input.query)
    forming = engine.retrieval.forming_memory_weight
    if forming is not None and gathered.buffered and any(turn.memory_id for turn in gathered.turns):
        weights = {**weights, "memory": forming}
    ranked = rank(gathered.memories, gathered.turns, weights)
    options = request.options
    found = list(_first_hits(engine, tenant, ranked, gathered))
    hits = retrieve_time.in_time(engine, tenant, found, gathered.window, request, gathered.limit)
    if not options.explain:
        hits = [hit.model_copy(update={"score_parts": None}) for hit in hits]
    if options.max_tokens is None:
        return RetrieveResponse(data=hits)
    packed, tokens = pack(hits, options.max_tokens)
    if hits and not packed:
        # Not an empty list in silence: the caller's budget, not the search, came up empty.
        needed = smallest_piece(hits)
        message = (
            f"options.max_tokens ({options.max_tokens}) is below the smallest whole turn of the "
            f"{len(hits)} hits ({needed} tokens): nothing fits; send max_tokens of at least {needed}."
        )
        return RetrieveResponse(data=[], tokens=0, message=message)
    return RetrieveResponse(data=packed, tokens=tokens)


def gather(engine: Engine, tenant: str, request: RetrieveRequest) -> Gathered:
    """Candidates from the index (memory and turn documents) and the buffered turns, with their
    features (`retrieval.features`)."""
    threads = list(dict.fromkeys(request.parent_session_uuids))
    excluded = request.excluded_dialogs()
    limit = min(request.options.limit, engine.limits.retrieve_max_limit)
    config = engine.retrieval
    vector = engine.embedder.embed([request.user_input.query], mode="query")[0]
    deadline.check()

    window = retrieve_time.window_of(request)
    wanted: dict[DocKind, int] = {"memory": max(config.memory_candidates, limit * 4)}
    if config.turn_documents:
        wanted["turn"] = max(config.turn_candidates, limit * 4)
    # The index keeps to the event-time window itself, so a narrow one still fills the candidates.
    said = window.period if window.bounded else None
    # The question analysed once, for the index's BM25, the buffered turns' and the speakers.
    query = Query.read(request.user_input.query, engine.clock.now())
    found = engine.index.search_kinds(
        tenant, threads, request.user_input.query, vector, wanted, said, terms=query.terms
    )
    memory_hits, turn_hits = found["memory"], found.get("turn", [])
    deadline.check()
    indexed = [
        FoundTurn(
            key=hit.doc_id,
            memory_id=hit.memory_id,
            dense=hit.dense,
            window=hit.window,
            bm25=hit.lexical,
            text=hit.text,
            said=hit.occurred_at,
        )
        for hit in turn_hits
        if hit.memory_id
    ]
    buffered = {
        _turn_key(turn): turn
        for turn in engine.store.buffered_turns_in_threads(tenant, threads)
        if turn.dialog_uuid not in excluded and _in_window(window, turn)
    }
    pooled, scale, lexical = _buffered_found(engine, buffered, query, vector, indexed)
    # Without one lexical scale: the index's turns over their own best, the buffered over the pool's.
    scales: tuple[float | None, ...] = (None, scale)
    share = 1.0
    if config.one_lexical_scale and pooled:
        # One BM25 for every turn candidate (the pool's), and the memory documents' on its scale.
        share = (
            memory_lexical_share(lexical, (_pooled_key(turn) for turn in indexed))
            ** config.memory_share_power
        )
        indexed, scales = _on_pool_scale(indexed, lexical, scale), (scale, scale)
    sources = (indexed, pooled)
    deadline.check()
    return Gathered(
        query=query,
        limit=limit,
        excluded=excluded,
        memories=memory_candidates(((hit.doc_id, hit.dense, hit.lexical) for hit in memory_hits), share),
        sources=sources,
        scales=scales,
        turns=[
            turn
            for source, top in zip(sources, scales, strict=True)
            for turn in turn_candidates(source, query, config.window_share, config.own_document, top)
        ],
        buffered=buffered,
        lines={turn.key: (turn.text, turn.said) for turn in indexed},
        window=window,
        history=request.options.history,
    )


def _first_hits(
    engine: Engine, tenant: str, ranked: list[RankedUnit], gathered: Gathered
) -> Iterator[tuple[RetrievedMemory, Memory | None]]:
    """Shape the best units, each with its memory (None for a buffered turn); memories are read
    from the store only as far down as needed, the ones that could fill the remaining places in
    one read (one BatchGetItem on DynamoDB)."""
    limit, excluded = gathered.limit, gathered.excluded
    given = 0
    read: dict[str, Memory] = {}
    asked: set[str] = set()
    for position, unit in enumerate(ranked):
        if given == limit:
            return
        if unit.memory_id is None:
            given += 1
            yield _turn_hit(gathered.buffered[unit.key], unit), None
            continue
        if unit.memory_id not in asked:
            later = islice(ranked, position, None)
            unread = (u.memory_id for u in later if u.memory_id is not None and u.memory_id not in asked)
            window = list(islice(unread, limit - given))
            read.update(engine.store.get_memories(tenant, window, vectors=False))
            asked.update(window)
        memory = read.get(unit.memory_id)
        # Deleted since it was indexed, or the caller already has all of it (a fact has no dialogs).
        if memory is None or (memory.source_dialog_uuids and set(memory.source_dialog_uuids) <= excluded):
            continue
        # What it said at `as_of`: a bank fact reworded after it reads as it did then.
        said = wording(memory, gathered.window.as_of)
        if said is None or not gathered.window.admits_spoken(said[1], memory.life.event_dates):
            continue  # stated after as_of, or a fact (indexed without a time) stated outside the window
        if not (gathered.history or memory.life.still_holds(gathered.window.as_of)):
            continue  # a retired fact: history, shown on request (options.history)
        given += 1
        yield _memory_hit(memory, unit, gathered.lines, said), memory


def _in_window(window: Window, turn: Turn) -> bool:
    """A buffered turn said within the window, or speaking of a time within it ("yesterday"
    resolved against its own timestamp, as extraction will write it)."""
    return not window.bounded or window.admits_spoken(turn.timestamp, event_dates([turn]))


def _turn_key(turn: Turn) -> str:
    return f"turn:{turn.session_uuid}:{turn.dialog_uuid}"


def _pooled_key(turn: FoundTurn) -> str:
    """An indexed turn candidate's key in the buffered turns' BM25 pool."""
    return f"indexed:{turn.key}"


def _on_pool_scale(
    indexed: list[FoundTurn], pooled: dict[str, float], scale: float | None
) -> list[FoundTurn]:
    """The indexed turn candidates with their BM25 from the pool. One the pool did not analyse (a
    long text past the request's analysis budget) keeps its index BM25 relative to the best
    indexed turn's, as without the pool, counted on the pool's scale."""
    top = max((turn.bm25 for turn in indexed), default=0.0) or 1.0
    return [
        turn._replace(
            bm25=pooled[key] if (key := _pooled_key(turn)) in pooled else turn.bm25 / top * (scale or 0.0)
        )
        for turn in indexed
    ]


def _buffered_found(
    engine: Engine, turns: dict[str, Turn], query: Query, vector: list[float], indexed: list[FoundTurn]
) -> tuple[list[FoundTurn], float | None, dict[str, float]]:
    """Buffered turns are not indexed yet: score them here, with BM25 over the buffered turns
    pooled with the indexed turn candidates (their text as indexed), and that pool's best BM25 as
    the scale. The best of the buffered turns alone would count as 1 however weakly it matched:
    beside extracted memories, a handful of buffered turns would then outrank the turn documents
    that match the question's words far better. Also returns the pool's BM25 of every text it
    analysed (an indexed turn's under `_pooled_key`), for `RetrievalConfig.one_lexical_scale`.

    Each text is analysed once and kept, a bounded head of it, within a budget per request
    (`turn_terms`): a buffered turn not analysed yet is scored by its vector alone."""
    if not turns:
        return [], None, {}
    # Each turn's line built once: a long turn's text is copied a few hundred kilobytes at a time.
    line = {key: turn.text() for key, turn in turns.items()}
    newest = sorted(turns.items(), key=lambda item: (item[1].timestamp, item[1].seq), reverse=True)
    texts = [(key, turn_lexical_text(turn, engine.retrieval, line[key])) for key, turn in newest]
    texts += [(_pooled_key(turn), turn.text) for turn in indexed]
    read = turn_terms.analysed(engine, texts, engine.limits.retrieve_analyse_budget_chars)
    lexical = bm25_counted({key: analysed.terms for key, analysed in read.items()}, query.terms)
    lexical = {key: lexical.get(key, 0.0) for key in read}
    scale = max(lexical.values(), default=0.0) or None
    # Stored with the turn by the worker, or cached; at most a budget embedded here (turn_vectors).
    vectors = turn_vectors.for_query(
        engine, turns, engine.limits.retrieve_embed_budget, dimension=len(vector) if vector else None
    )
    dense = {key: _dot(vector, held) for key, held in vectors.items() if key in turns}
    windows = _windows(turns, vectors, dense, engine.turn_dots) if engine.retrieval.buffered_windows else {}
    documents: dict[str, float] = {}
    if engine.retrieval.buffered_batches:
        share = batches.side_share(lexical, turns, scale) ** engine.retrieval.batch_share_power
        documents = batches.documents(turns, read, query, engine.limits.batch_size, share)
    found = [
        FoundTurn(
            key=key,
            memory_id=None,
            dense=dense.get(key, 0.0),
            window=windows.get(key),
            bm25=lexical.get(key, 0.0),
            text=line[key],
            said=turn.timestamp,
            speakers=read[key].speakers if key in read else (),
            document=documents.get(key),
        )
        for key, turn in turns.items()
    ]
    return found, scale, lexical


def _windows(
    turns: dict[str, Turn], vectors: dict[str, list[float]], dense: dict[str, float], cache: VectorCache
) -> dict[str, float]:
    """Each buffered turn's window cosine, as a turn document has one: the query's cosine to the
    sum of the turn's vector and its neighbours' in its session (the ones before and after it that
    have a vector), normalised. Without it the window part, which favours a turn with context,
    goes only to extracted turns.

    Taken in closed form, q·Σv / |Σv| with |Σv|² = Σ_j Σ_k v_j·v_k: the query's dots are the turns'
    own cosines (`dense`), and each turn's dots with itself and its next two turns do not depend
    on the question, so they are kept in the process (`cache`) and a retrieve sums a few floats
    per turn instead of building a sum of vectors for each (thousands of buffered turns)."""
    by_session: dict[str, list[tuple[int, str]]] = {}
    for key, turn in turns.items():
        by_session.setdefault(turn.session_uuid, []).append((turn.seq, key))
    out: dict[str, float] = {}
    for ordered in by_session.values():
        keys = [key for _, key in sorted(ordered)]
        held = [vectors.get(key) for key in keys]
        # Per turn: its dot with itself, with the next turn and with the one after (0 where
        # either has no vector).
        own, step, skip = zip(*_neighbour_dots([turns[key] for key in keys], held, cache), strict=True)
        for place, key in enumerate(keys):
            if held[place] is None:
                continue
            first, last = max(0, place - 1), min(len(keys) - 1, place + 1)
            span = range(first, last + 1)
            along = sum(dense[keys[at]] for at in span if held[at] is not None)
            square = sum(own[at] for at in span) + 2 * sum(step[at] for at in range(first, last))
            if last - first == 2:
                square += 2 * skip[first]
            size = math.sqrt(max(square, 0.0)) or 1.0
            out[key] = along / size
    return out


def _neighbour_dots(
    ordered: list[Turn], held: list[list[float] | None], cache: VectorCache
) -> list[list[float]]:
    """[v·v, v·next, v·after-next] for each turn of a session in order, cached under the three
    turns' keys (a turn's key names its text, so a new vector is a new key)."""
    names = [
        cache_key(turn) if vector is not None else "-" for turn, vector in zip(ordered, held, strict=True)
    ]
    dots: list[list[float]] = []
    for at, vector in enumerate(held):
        if vector is None:
            dots.append([0.0, 0.0, 0.0])
            continue
        name = "|".join(names[at : at + 3])
        found = cache.get(name)
        if found is None:
            found = [_dot(vector, vector), _pair(held, at, at + 1), _pair(held, at, at + 2)]
            cache.put(name, found)
        dots.append(found)
    return dots


def _pair(held: list[list[float] | None], at: int, other: int) -> float:
    if other >= len(held):
        return 0.0
    a, b = held[at], held[other]
    return _dot(a, b) if a is not None and b is not None else 0.0


def _dot(a: list[float], b: list[float]) -> float:
    return sum(map(operator.mul, a, b))


def _memory_hit(
    memory: Memory,
    unit: RankedUnit,
    lines: dict[str, tuple[str, datetime | None]],
    said: tuple[str, datetime],
) -> RetrievedMemory:
    content, stated_at = said
    return RetrievedMemory(
        memory_id=memory.memory_id,
        content=content,
        score=unit.score,
        kind="memory",
        session_uuid=memory.session_uuid,
        source_dialog_uuids=memory.source_dialog_uuids,
        evidence=list(_memory_evidence(memory, unit, lines)),
        score_parts=_rounded(unit.parts),
        stated_at=stated_at,
    )


def _memory_evidence(
    memory: Memory, unit: RankedUnit, lines: dict[str, tuple[str, datetime | None]]
) -> Iterator[TurnEvidence]:
    """The memory's matched turns, best first: a turn document's id is `<memory id>:<position>`."""
    sources = memory.source_dialog_uuids
    for key, score in unit.turns:
        position = key.rsplit(":", 1)[-1]
        if position.isdigit() and int(position) < len(sources):
            text = spoken_line(*lines.get(key, ("", None)))
            yield TurnEvidence(dialog_uuid=sources[int(position)], score=score, text=text)


def _turn_hit(turn: Turn, unit: RankedUnit) -> RetrievedMemory:
    return RetrievedMemory(
        # The wire's rule (API.md): a buffered turn's hit carries its dialog uuid as `memory_id`;
        # within the engine it is a unit with no memory id (`RankedUnit.memory_id` None).
        memory_id=turn.dialog_uuid,
        content=turn.text(),
        score=unit.score,
        kind="dialog",
        session_uuid=turn.session_uuid,
        source_dialog_uuids=[turn.dialog_uuid],
        evidence=[TurnEvidence(dialog_uuid=turn.dialog_uuid, score=unit.score, text=turn.text())],
        score_parts=_rounded(unit.parts),
        stated_at=turn.timestamp,
    )


def _rounded(parts: dict[str, float]) -> dict[str, float]:
    return {name: round(value, 6) for name, value in parts.items()}
