"""Score fusion: one ranking of memories and still-buffered turns from dense and lexical scores.

Pure functions over plain data, so the retrieval benchmark can replay and tune them. The unit of
the ranking is what a caller gets back: a memory (which stands for all of its source turns) or a
raw buffered turn. Evidence comes at two granularities:

- turn evidence: each source turn of a memory is indexed on its own (a "turn" document pointing
  back to its memory), and each buffered turn is scored ad hoc. A turn's score mixes its cosine
  with its BM25 score divided by the best BM25 score among all turn candidates of the query (the
  turn's BM25 is over its line and, where indexed, the lines around it: see `retrieval.config`),
  and the cosine is mixed with that of the turn's window vector (the turn with its neighbours in
  the memory) where it has one;
- memory evidence: the memory's own document (every extracted field plus the batch's dialogue),
  BM25 divided by the best among memory candidates, and the cosine of its summary vector.

A turn said on a date the query names ("in May 2023") gets a bonus (retrieval.dates), and so does a
turn one of whose speakers the query names (retrieval.speakers).
A memory scores as its best turn plus its own evidence, minus a handicap for standing for a whole
batch where a raw turn stands for one; its matched turns, best first, are its evidence. Weights
are measured on LoCoMo (bench/locomo_retrieval.py, bench/locomo/tune.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

__all__ = ["FusionWeights", "MemoryEvidence", "RankedUnit", "TurnEvidence", "fuse", "rank"]


@dataclass(frozen=True)
class FusionWeights:
    """How much each signal counts. The measured default is `retrieval.config.DEFAULT_WEIGHTS`
    (docs/retrieval.md)."""

    # A turn's score is turn_dense · cosine + (1 - turn_dense) · normalised BM25,
    turn_dense: float = 0.8
    # where the cosine is (1 - turn_window) · the turn's own + turn_window · its window's (the turn
    # with its neighbours, embedded as one passage) when the turn has a window vector.
    turn_window: float = 0.0
    # plus this when the turn was said on a date the query names (half of it: same month, other day).
    turn_date: float = 0.3
    # plus this when the query names one of the turn's speakers ("What did Caroline paint?").
    turn_speaker: float = 0.0
    # Added to a memory's best turn: its own document's normalised BM25 and cosine.
    memory_lexical: float = 1.0
    memory_dense: float = 0.0
    # Subtracted from a memory's score: it fills as many places as it has turns, so a raw buffered
    # turn as good as a memory's best turn comes first unless the memory's document also matches.
    memory_handicap: float = 0.8

    def with_lexical_share(self, share: float) -> FusionWeights:
        """These weights with the lexical terms (a turn's BM25 share, the memory document's BM25,
        and the speaker match, a match of words too) scaled by `share`: 0 ranks by the dense and
        date terms alone, 1 changes nothing."""
        return replace(
            self,
            turn_dense=1 - (1 - self.turn_dense) * share,
            memory_lexical=self.memory_lexical * share,
            turn_speaker=self.turn_speaker * share,
        )


@dataclass(frozen=True)
class TurnEvidence:
    """One turn's raw scores; `owner` is the unit it stands for (its memory, or itself if buffered).

    `key` names the turn itself (its index document, or the buffered turn's key): what a hit's
    evidence lists. Empty when the caller does not need evidence.
    """

    owner: str
    dense: float
    lexical: float
    on_date: float = 0.0  # retrieval.dates.date_match of the turn's date and the query's dates
    key: str = ""
    named: float = 0.0  # retrieval.speakers.SpeakerMatch: the query names one of the turn's speakers
    window: float | None = None  # the cosine of the turn's window vector; None when it has none


@dataclass(frozen=True)
class MemoryEvidence:
    """A memory document's raw scores."""

    memory_id: str
    dense: float
    lexical: float


@dataclass(frozen=True)
class RankedUnit:
    """A unit of the ranking: its score, the parts the score adds up from, and its scored turns."""

    key: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    scored_turns: tuple[tuple[str, float], ...] = ()  # (turn key, turn score), in evidence order

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
    memories: Sequence[MemoryEvidence],
    turns: Sequence[TurnEvidence],
    weights: FusionWeights,
    memory_ids: frozenset[str] | set[str],
) -> list[RankedUnit]:
    """Rank every unit that has evidence, best first (ties broken by key for stable output).

    `memory_ids` names which owners are memories (the others are buffered turns): a memory found
    only through its own document still ranks, with no turn part. A unit's `parts` are its best
    turn's dense, lexical, date and speaker terms, and for a memory its document's terms and the handicap;
    they add up to its score (its cosine split into "dense", its own, and "window").
    """
    top_turn = max((turn.lexical for turn in turns), default=0.0) or 1.0
    top_memory = max((memory.lexical for memory in memories), default=0.0) or 1.0
    dense_w, lexical_w, date_w = weights.turn_dense, (1 - weights.turn_dense) / top_turn, weights.turn_date
    speaker_w, window_w = weights.turn_speaker, weights.turn_window
    best: dict[str, tuple[float, TurnEvidence]] = {}
    scored: dict[str, list[tuple[str, float]]] = {}
    for turn in turns:
        cosine = turn.dense if turn.window is None else turn.dense + window_w * (turn.window - turn.dense)
        score = dense_w * cosine + lexical_w * turn.lexical
        score += date_w * turn.on_date + speaker_w * turn.named
        scored.setdefault(turn.owner, []).append((turn.key, score))
        found = best.get(turn.owner)
        if found is None or score > found[0]:
            best[turn.owner] = (score, turn)
    units: dict[str, tuple[float, dict[str, float]]] = {}
    for owner, (score, turn) in best.items():
        if owner not in memory_ids:
            units[owner] = (score, _turn_parts(turn, weights, top_turn))
    own = {memory.memory_id: memory for memory in memories}
    for memory_id in memory_ids:
        found = best.get(memory_id)
        score = found[0] if found else 0.0
        parts = _turn_parts(found[1], weights, top_turn) if found else {}
        parts["handicap"] = -weights.memory_handicap
        score -= weights.memory_handicap
        evidence = own.get(memory_id)
        if evidence is not None:
            parts["memory"] = weights.memory_lexical * evidence.lexical / top_memory
            parts["memory_dense"] = weights.memory_dense * max(evidence.dense, 0.0)
            score += parts["memory"] + parts["memory_dense"]
        units[memory_id] = (score, parts)
    ranked = [
        RankedUnit(key, round(score, 6), parts, tuple(scored.get(key, ())))
        for key, (score, parts) in units.items()
    ]
    ranked.sort(key=lambda unit: (-unit.score, unit.key))
    return ranked


def _turn_parts(turn: TurnEvidence, weights: FusionWeights, top_turn: float) -> dict[str, float]:
    own, window = (1.0, 0.0) if turn.window is None else (1 - weights.turn_window, weights.turn_window)
    return {
        "dense": weights.turn_dense * own * turn.dense,
        "window": weights.turn_dense * window * (turn.window or 0.0),
        "lexical": (1 - weights.turn_dense) * turn.lexical / top_turn,
        "date": weights.turn_date * turn.on_date,
        "speaker": weights.turn_speaker * turn.named,
    }


def fuse(
    memories: Sequence[MemoryEvidence],
    turns: Sequence[TurnEvidence],
    weights: FusionWeights,
    memory_ids: frozenset[str] | set[str],
) -> list[tuple[str, float]]:
    """`rank`, as (key, score) pairs."""
    return [(unit.key, unit.score) for unit in rank(memories, turns, weights, memory_ids)]
