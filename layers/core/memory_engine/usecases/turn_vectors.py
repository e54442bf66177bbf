"""Passage vectors of buffered turns: embedded once, off the request path, and kept with the turn.

Every extraction job embeds its session's buffered turns that have no vector yet (before the LLM
is asked anything) and uses them for the memory's turn documents; when it ends, failed or not, it
stores the vectors of the turns that stay buffered (`Turn.embedding`): those extracted now leave
the buffer and need none, so a turn costs no extra write in the common case.

Where the process outlives its requests (the local server), a turn is also embedded when it
arrives, by a background step at the worker's priority (`warm`, through the engine's `arrivals`):
its vector is in the process's cache before the worker's job or a retrieve asks for it.

Retrieve scores a buffered turn with its stored vector, or the process's cache, and
embeds at most `retrieve_embed_budget` turns that have neither, of `retrieve_embed_budget_chars`
characters in all (the newest that fit: in a conversation those are the ones just said), so its
cost grows neither with the number of turns waiting for extraction nor with their length; the
budget is a few short turns, so a retrieve never embeds a neighbour's long text. A turn left
out is scored by its words until its vector is made.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from itertools import groupby

from memory_engine import deadline
from memory_engine.embedding import CHUNK_CHARS
from memory_engine.engine import Engine
from memory_engine.errors import Unavailable
from memory_engine.indexing.documents import turn_embedding_text
from memory_engine.models.domain import Turn

log = logging.getLogger("memory_engine.worker")

# Optional work of a retrieve (embedding or analysing buffered turns it has not seen) goes on only
# in the first half of its deadline, and while at least this much of it is left.
OPTIONAL_RESERVE_S = 2.0


def time_for_optional_work() -> bool:
    """Whether the current request may still do work it can answer without (`deadline`)."""
    clock = deadline.current()
    return clock.spare(max(OPTIONAL_RESERVE_S, (clock.seconds or 0.0) / 2))


def cache_key(turn: Turn) -> str:
    """The process cache's key: the turn, and its text (a new text is a new vector)."""
    digest = hashlib.sha1(turn_embedding_text(turn).encode()).hexdigest()
    return f"{turn.tenant}:{turn.session_uuid}:{turn.dialog_uuid}:{digest}"


def _embed(engine: Engine, turns: Sequence[Turn]) -> list[list[float]]:
    """Vectors for `turns`, from the cache where the server (same process) already embedded them;
    the ones embedded here go into the cache at once, so a retrieve while the job still runs
    (its vectors are stored when it ends) does not embed them again on its request path."""
    keys = [cache_key(turn) for turn in turns]
    found = [engine.turn_vectors.get(key) for key in keys]
    missing = [index for index, vector in enumerate(found) if vector is None]
    if missing:
        texts = [turn_embedding_text(turns[index]) for index in missing]
        for index, vector in zip(missing, engine.embedder.embed(texts, mode="passage"), strict=True):
            engine.turn_vectors.put(keys[index], vector)
            found[index] = vector
    return [vector for vector in found if vector is not None]


def warm(engine: Engine, turns: Sequence[Turn]) -> int:
    """Put the vectors of `turns` that have none (stored or cached) into the process's cache, off
    the request path: the background step's side. Returns how many it embedded."""
    missing = [
        turn for turn in turns if turn.embedding is None and engine.turn_vectors.get(cache_key(turn)) is None
    ]
    if missing:
        _embed(engine, missing)
    return len(missing)


def embedded(engine: Engine, turns: Sequence[Turn]) -> list[Turn]:
    """`turns` with a vector each: stored ones as they are, the others from the process cache or
    embedded now (the worker's side; nothing is written)."""
    missing = [turn for turn in turns if turn.embedding is None]
    if not missing:
        return list(turns)
    vectors = dict(zip((id(turn) for turn in missing), _embed(engine, missing), strict=True))
    return [
        turn if turn.embedding is not None else turn.model_copy(update={"embedding": vectors[id(turn)]})
        for turn in turns
    ]


def store(engine: Engine, turns: Sequence[Turn]) -> None:
    """Store the vectors the turns carry, one call per session; best effort: a turn whose vector
    could not be stored is embedded again by the next job (the failure is logged)."""

    def session(turn: Turn) -> tuple[str, str]:
        return turn.tenant, turn.session_uuid

    with_vector = [turn for turn in turns if turn.embedding is not None]
    try:
        for (tenant, session_uuid), group in groupby(sorted(with_vector, key=session), key=session):
            engine.store.save_turn_vectors(
                tenant, session_uuid, {turn.dialog_uuid: turn.embedding for turn in group if turn.embedding}
            )
    except Unavailable as error:
        log.warning("could not store buffered turns' vectors: %s", error.message)


def for_query(
    engine: Engine,
    turns: Mapping[str, Turn],
    budget: int,
    budget_chars: int | None = None,
    dimension: int | None = None,
) -> dict[str, list[float]]:
    """The vectors retrieve can score with, by the caller's key: stored, cached, and some embedded
    now (newest first, then kept in the cache): at most `budget` turns holding at most
    `budget_chars` characters as embedded (each text capped at `embed_max_chars`), and only while
    the request has `time_for_optional_work`. Turns left out have none yet.

    A stored vector of another length than `dimension` (the query's) is another model's, stored
    before the embedder was changed and `reindex --reembed` ran: the turn counts as having none."""
    vectors: dict[str, list[float]] = {}
    unknown: list[tuple[str, Turn]] = []
    for key, turn in turns.items():
        vector = turn.embedding or engine.turn_vectors.get(cache_key(turn))
        if vector is not None and dimension is not None and len(vector) != dimension:
            vector = engine.turn_vectors.get(cache_key(turn))
            vector = vector if vector is not None and len(vector) == dimension else None
        if vector is not None:
            vectors[key] = vector
        else:
            unknown.append((key, turn))
    newest = sorted(unknown, key=lambda item: (item[1].timestamp, item[1].seq), reverse=True)[:budget]
    cap = engine.limits.embed_max_chars
    chars = engine.limits.retrieve_embed_budget_chars if budget_chars is None else budget_chars
    for chunk in _chunks(newest, cap, chars):
        if not time_for_optional_work():
            break  # the answer comes in time; these turns are scored by their words alone
        fresh = engine.embedder.embed([turn_embedding_text(turn) for _, turn in chunk], mode="passage")
        for (key, turn), vector in zip(chunk, fresh, strict=True):
            engine.turn_vectors.put(cache_key(turn), vector)
            vectors[key] = vector
    return vectors


def _chunks(turns: Sequence[tuple[str, Turn]], cap: int, budget_chars: int) -> list[list[tuple[str, Turn]]]:
    """The turns that fit in `budget_chars` (in order, passing over one that does not: a long turn
    waits for its vector from off the request path, a short one after it still gets one), in
    calls of about `embedding.CHUNK_CHARS` characters each, so the deadline is asked between them."""
    chunks: list[list[tuple[str, Turn]]] = []
    spent = size = 0
    for item in turns:
        chars = min(len(turn_embedding_text(item[1])), cap)
        if spent + chars > budget_chars:
            continue
        if not chunks or size + chars > CHUNK_CHARS:
            chunks.append([])
            size = 0
        chunks[-1].append(item)
        spent += chars
        size += chars
    return chunks
