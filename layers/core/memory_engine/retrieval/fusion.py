"""Score fusion: one ranking of memories and still-buffered turns from dense and lexical scores.

Pure functions over plain data, so the retrieval benchmark can replay and tune them. The unit of
the ranking is what a caller gets back: a memory (which stands for all of its source turns) or a
raw buffered turn. Evidence comes at two granularities:

- turn evidence: each source turn of a memory is indexed on its own (a "turn" document pointing
  back to its memory), and each buffered turn is scored ad hoc. A turn's score mixes its cosine
  with its BM25 score divided by the best BM25 score among all turn candidates of the query;
- memory evidence: the memory's own document (every extracted field plus the batch's dialogue),
  BM25 divided by the best among memory candidates, and the cosine of its summary vector.

A turn said on a date the query names ("in May 2023") gets a bonus (retrieval.dates).
A memory scores as its best turn plus its own evidence, minus a handicap for standing for a whole
batch where a raw turn stands for one. Weights are measured on LoCoMo (bench/locomo_retrieval.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class FusionWeights:
    """How much each signal counts. Measured choices live in bench/ and docs/retrieval.md."""

    # A turn's score is turn_dense · cosine + (1 - turn_dense) · normalised BM25,
    turn_dense: float = 0.8
    # plus this when the turn was said on a date the query names (half of it: same month, other day).
    turn_date: float = 0.3
    # Added to a memory's best turn: its own document's normalised BM25 and cosine.
    memory_lexical: float = 1.0
    memory_dense: float = 0.0
    # Subtracted from a memory's score: it fills as many places as it has turns, so a raw buffered
    # turn as good as a memory's best turn comes first unless the memory's document also matches.
    memory_handicap: float = 0.8


@dataclass(frozen=True)
class TurnEvidence:
    """One turn's raw scores; `owner` is the unit it stands for (its memory, or itself if buffered)."""

    owner: str
    dense: float
    lexical: float
    on_date: float = 0.0  # retrieval.dates.date_match of the turn's date and the query's dates


@dataclass(frozen=True)
class MemoryEvidence:
    """A memory document's raw scores."""

    memory_id: str
    dense: float
    lexical: float


def fuse(
    memories: Sequence[MemoryEvidence],
    turns: Sequence[TurnEvidence],
    weights: FusionWeights,
    memory_ids: frozenset[str] | set[str],
) -> list[tuple[str, float]]:
    """Rank every unit that has evidence, best first (ties broken by key for stable output).

    `memory_ids` names which owners are memories (the others are buffered turns): a memory found
    only through its own document still ranks, with no turn part.
    """
    top_turn = max((turn.lexical for turn in turns), default=0.0) or 1.0
    top_memory = max((memory.lexical for memory in memories), default=0.0) or 1.0
    best_turn: dict[str, float] = {}
    for turn in turns:
        score = weights.turn_dense * turn.dense + (1 - weights.turn_dense) * turn.lexical / top_turn
        score += weights.turn_date * turn.on_date
        if score > best_turn.get(turn.owner, float("-inf")):
            best_turn[turn.owner] = score
    scores = {owner: score for owner, score in best_turn.items() if owner not in memory_ids}
    own = {memory.memory_id: memory for memory in memories}
    for memory_id in memory_ids:
        evidence = own.get(memory_id)
        score = best_turn.get(memory_id, 0.0) - weights.memory_handicap
        if evidence is not None:
            score += weights.memory_lexical * evidence.lexical / top_memory
            score += weights.memory_dense * max(evidence.dense, 0.0)
        scores[memory_id] = score
    ranked = [(key, round(score, 6)) for key, score in scores.items()]
    ranked.sort(key=lambda item: (-item[1], item[0]))
    return ranked
