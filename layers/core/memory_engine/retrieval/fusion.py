"""Score fusion: one ranking of memories and still-buffered turns from their candidates' features.

Pure functions over plain data, so the retrieval benchmark can replay and tune them. The unit of
the ranking is what a caller gets back: a memory (which stands for all of its source turns) or a
raw buffered turn. Its candidates (`retrieval.features`) come at two granularities:

- turns: each source turn of a memory is indexed on its own (a "turn" document pointing back to
  its memory), and each buffered turn is scored ad hoc; a turn's features are its cosine (split
  between its own vector and its window's), its BM25 divided by the best of its source, and the
  query-side features (a date the query names, a speaker it names);
- memory documents: every extracted field plus the batch's dialogue, with its BM25 divided by the
  best among memory documents and the cosine of its summary vector.

Every term of a score is a weight times a feature of the same name, `parts = {f: w[f] · x[f]}`, and
the score IS the sum of its parts, computed once: what `options.explain` shows adds up by
construction. A turn scores the sum of its parts; a unit scores as its best turn, and a memory adds
its own document's parts and `handicap` (-1 times its weight: it fills as many places as it has
turns, so a raw buffered turn as good as a memory's best turn comes first unless the memory's
document also matches). A memory's matched turns, best first, are its evidence. Weights are
measured on LoCoMo (bench/quality/locomo_retrieval.py, bench/quality/locomo/tune.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memory_engine.retrieval.features import MemoryCandidate, TurnCandidate

__all__ = ["LEXICAL_FEATURES", "RankedUnit", "Weights", "rank", "with_lexical_share"]

# Feature name -> weight; every feature of a candidate needs one (retrieval.config.DEFAULT_WEIGHTS).
Weights = Mapping[str, float]

# The terms that match words: a turn's BM25, its speaker match, the memory document's BM25.
LEXICAL_FEATURES = ("lexical", "speaker", "memory")


@dataclass(frozen=True)
class RankedUnit:
    """A unit of the ranking: its score, the parts the score adds up from, and its scored turns."""

    key: str  # the memory id, or the buffered turn's key
    memory_id: str | None  # None: a buffered turn, not a memory
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    scored_turns: tuple[tuple[str, float], ...] = ()  # (turn key, turn score), in candidate order

    @property
    def turns(self) -> tuple[tuple[str, float], ...]:
        """Its turns best first (then by key), one entry per turn key: the hit's evidence."""
        best: dict[str, float] = {}
        for key, score in self.scored_turns:
            if key and score > best.get(key, float("-inf")):
                best[key] = score
        ordered = sorted(best.items(), key=lambda item: (-item[1], item[0]))
        return tuple((key, round(score, 6)) for key, score in ordered)


def rank(
    memories: Sequence[MemoryCandidate], turns: Sequence[TurnCandidate], weights: Weights
) -> list[RankedUnit]:
    """Rank every unit that has a candidate, best first (ties broken by key for stable output).

    A memory found only through its own document still ranks, with no turn part.
    """
    best: dict[str, tuple[float, dict[str, float]]] = {}
    scored: dict[str, list[tuple[str, float]]] = {}
    for turn in turns:
        parts = {name: weights[name] * value for name, value in turn.features.items()}
        score = sum(parts.values())
        owner = turn.owner
        scored.setdefault(owner, []).append((turn.key, score))
        found = best.get(owner)
        if found is None or score > found[0]:
            best[owner] = (score, parts)
    memory_ids = {turn.memory_id for turn in turns if turn.memory_id}
    memory_ids.update(memory.memory_id for memory in memories)
    own = {memory.memory_id: memory for memory in memories}
    units: list[RankedUnit] = []
    for owner, (_, parts) in best.items():
        if owner not in memory_ids:
            units.append(_unit(owner, None, dict(parts), scored))
    for memory_id in memory_ids:
        found = best.get(memory_id)
        parts = dict(found[1]) if found else {}
        parts["handicap"] = -weights["handicap"]
        document = own.get(memory_id)
        if document is not None:
            parts.update((name, weights[name] * value) for name, value in document.features.items())
        units.append(_unit(memory_id, memory_id, parts, scored))
    units.sort(key=lambda unit: (-unit.score, unit.key))
    return units


def _unit(
    key: str, memory_id: str | None, parts: dict[str, float], scored: dict[str, list[tuple[str, float]]]
) -> RankedUnit:
    return RankedUnit(key, memory_id, round(sum(parts.values()), 6), parts, tuple(scored.get(key, ())))


def with_lexical_share(weights: Weights, share: float) -> dict[str, float]:
    """These weights with the lexical terms (`LEXICAL_FEATURES`) scaled by `share`, the turn's BM25
    weight given up going to its cosine (`dense` and `window`): 0 ranks by the cosines and the date
    alone, 1 changes nothing."""
    scaled = dict(weights)
    for name in LEXICAL_FEATURES:
        scaled[name] = weights[name] * share
    given_up = weights["lexical"] - scaled["lexical"]
    scaled["dense"] = weights["dense"] + given_up
    scaled["window"] = weights["window"] + given_up
    return scaled
