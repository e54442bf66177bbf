"""Score fusion: one ranking from dense and lexical scores of memories and raw turns.

Pure functions over plain data, so the retrieval benchmark can replay and tune them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class FusionWeights:
    """How much each signal counts. Measured choices live in bench/ and the README."""

    dense: float = 0.5
    lexical: float = 0.5
    # A raw buffered turn covers one dialog, a memory covers a batch: a small handicap keeps a
    # fresh turn from hiding the memory that holds the same fact with its context.
    turn_factor: float = 1.0


@dataclass(frozen=True)
class Candidate:
    key: str
    dense: float
    lexical: float
    is_turn: bool = False


def fuse(candidates: Sequence[Candidate], weights: FusionWeights) -> list[tuple[str, float]]:
    """Max-normalise lexical scores over all candidates, mix with dense cosine, sort descending."""
    if not candidates:
        return []
    top_lexical = max(candidate.lexical for candidate in candidates) or 1.0
    scored = []
    for candidate in candidates:
        score = weights.dense * max(candidate.dense, 0.0) + weights.lexical * (
            candidate.lexical / top_lexical
        )
        if candidate.is_turn:
            score *= weights.turn_factor
        scored.append((candidate.key, round(score, 6)))
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored
