"""Ranking features: one named record per candidate, built by one function for every source.

A candidate turn comes from one of two sources: a turn document of the index (a memory's source
turn) or a still-buffered turn scored ad hoc. Each source says what it found as a `FoundTurn`
(its cosines, its raw BM25 against that source's own statistics, its text and date), and
`turn_candidates` turns one source's finds into `TurnCandidate`s whose `features` map a feature
name to the number its weight multiplies (`retrieval.fusion.rank`). BM25 is divided by the best
of the same source: an indexed turn's BM25 (index-wide statistics) and a buffered turn's (the
buffered set's) are on different scales, so each is normalised against its own kind.

Adding a query-side ranking feature (one that compares the question with a candidate turn):

1. a scorer in `QUERY_SCORERS`: `(Query, FoundTurn) -> float`, built once per question in `Query`
   where it needs to read the question;
2. its default weight, under the same name, in `retrieval.config.DEFAULT_WEIGHTS`;
3. its ablation row (that weight at 0) in bench/quality/locomo/variants.py.

The score part of that name then shows in `options.explain` and adds to the score by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from memory_engine.retrieval.bm25 import TermCounts
from memory_engine.retrieval.dates import DateMention, date_match, named_dates, relative_dates
from memory_engine.retrieval.speakers import SpeakerMatch, speakers
from memory_engine.retrieval.text import tokenize

__all__ = [
    "MEMORY_FEATURES",
    "QUERY_SCORERS",
    "TURN_FEATURES",
    "AnalysedText",
    "FoundTurn",
    "MemoryCandidate",
    "Query",
    "TurnCandidate",
    "memory_candidates",
    "memory_lexical_share",
    "turn_candidates",
]


@dataclass(frozen=True)
class Query:
    """What the query-side scorers read of the question, worked out once per question."""

    text: str
    terms: tuple[str, ...]  # its words as BM25 reads them (`retrieval.text.tokenize`)
    dates: list[DateMention]  # the dates it names, absolute or relative to `now`
    speakers: SpeakerMatch  # whether it names one of a turn's speakers

    @classmethod
    def read(cls, text: str, now: datetime) -> Query:
        """The question analysed once: its terms serve the buffered turns' BM25 and the speakers."""
        terms = tuple(tokenize(text))
        return cls(text, terms, named_dates(text) + relative_dates(text, now), SpeakerMatch(terms))


class AnalysedText(NamedTuple):
    """What the ranking reads of a text it scores outside the index, read once and kept
    (`engine.TermCache`): its words for BM25 and its speaker labels."""

    terms: TermCounts
    speakers: tuple[str, ...]

    @classmethod
    def read(cls, words: str, labels: str) -> AnalysedText:
        """The terms of `words` and the distinct speakers of `labels` (the whole text: labels are
        cheap to find, while the words are analysed from a bounded head)."""
        return cls(TermCounts.of(tokenize(words)), tuple(dict.fromkeys(speakers(labels))))


class FoundTurn(NamedTuple):
    """A candidate turn as its source found it, before any normalisation."""

    key: str  # the turn: its index document id, or the buffered turn's key
    memory_id: str | None  # the memory it is a turn of; None for a buffered turn (its own unit)
    dense: float  # the query's cosine to the turn's vector
    window: float | None  # ... to its ±1 window's vector (turn documents only); None: it has none
    bm25: float  # raw BM25 against its own source's statistics
    text: str  # "speaker: line" as indexed
    said: datetime | None  # when the turn was said, where known
    # Its speaker labels where the source read them beforehand (a buffered turn: once, with its
    # words, `usecases.turn_terms`); None: read from `text` (`retrieval.speakers`).
    speakers: tuple[str, ...] | None = None
    # Its unit's document BM25 where the source scored one, on the memory documents' scale (a
    # buffered turn: its batch's, `usecases.retrieve`); None: its own BM25 over its source's best.
    document: float | None = None


class TurnCandidate(NamedTuple):
    """One candidate turn: the unit it counts for and its features by name (`TURN_FEATURES`)."""

    key: str
    memory_id: str | None  # None: a buffered turn, ranked as a unit of its own under `key`
    features: Mapping[str, float]

    @property
    def owner(self) -> str:
        """The ranking unit it counts for: its memory, or itself."""
        return self.memory_id or self.key


class MemoryCandidate(NamedTuple):
    """A memory's own document (its fields and its batch's dialogue) as a candidate."""

    memory_id: str
    features: Mapping[str, float]  # `MEMORY_FEATURES`


Scorer = Callable[[Query, FoundTurn], float]

# The features that compare the question with a turn beyond its cosines and BM25.
QUERY_SCORERS: dict[str, Scorer] = {
    # 1 when the turn was said on a date the question names, 0.5 in that month (retrieval.dates).
    "date": lambda query, turn: date_match(turn.said, query.dates),
    # 1 when the question names one of the turn's speakers (retrieval.speakers).
    "speaker": lambda query, turn: (
        query.speakers(turn.text) if turn.speakers is None else query.speakers.among(turn.speakers)
    ),
}
# Every feature of a turn candidate, in the order `options.explain` shows them.
TURN_FEATURES: tuple[str, ...] = ("dense", "window", "lexical", *QUERY_SCORERS)
# A memory document's features (a memory's `handicap` is the ranking's own: retrieval.fusion).
MEMORY_FEATURES: tuple[str, ...] = ("memory", "memory_dense")


def turn_candidates(
    found: Iterable[FoundTurn],
    query: Query,
    window_share: float,
    own_document: bool = True,
    scale: float | None = None,
) -> list[TurnCandidate]:
    """The candidates of ONE source (call once per source: BM25 is divided by the best of `found`).

    A turn's cosine is split between its own vector and its window's: `window_share` of it comes
    from the window where the turn has one (features `dense` and `window`), all of it from its own
    where it has none. With `own_document`, a buffered turn (a unit of its own) also carries its
    unit's document features, from itself (`MEMORY_FEATURES`; `_own_document`). `scale` is the
    BM25 that counts as 1 where the source was scored against a wider set than `found` (the
    buffered turns, pooled with the indexed candidates); by default the best of `found`.
    """
    turns = list(found)
    top = scale or max((turn.bm25 for turn in turns), default=0.0) or 1.0
    out = []
    for turn in turns:
        share = 0.0 if turn.window is None else window_share
        features = {
            "dense": (1 - share) * turn.dense,
            "window": share * turn.window if turn.window is not None else 0.0,
            "lexical": turn.bm25 / top,
        }
        for name, scorer in QUERY_SCORERS.items():
            features[name] = scorer(query, turn)
        if own_document and turn.memory_id is None:
            features.update(_own_document(turn, top))
        out.append(TurnCandidate(turn.key, turn.memory_id, features))
    return out


def _own_document(turn: FoundTurn, top_bm25: float) -> dict[str, float]:
    """A buffered turn is a unit of its own, so the turn is its unit's document: it gets the two
    features a memory's document gives (`MEMORY_FEATURES`), from its own BM25 (over the best of
    its source, as a memory document's over the best memory document) and its own cosine. Without
    them a memory's document parts (its summary's cosine alone ~0.2 of score with e5) would put any
    memory above any buffered turn, whatever the question: the order decided by a part the turn
    cannot have. Where the source scored the turn's batch as its document (`FoundTurn.document`),
    that is its BM25 part: a memory's document holds its whole batch of dialogue."""
    lexical = turn.bm25 / top_bm25 if turn.document is None else turn.document
    return {"memory": lexical, "memory_dense": max(turn.dense, 0.0)}


def memory_candidates(found: Iterable[tuple[str, float, float]], share: float = 1.0) -> list[MemoryCandidate]:
    """Memory documents as (memory id, cosine, raw BM25): BM25 divided by the best among them
    and multiplied by `share`, a negative cosine (a summary about something else) counted as none.

    `share` puts the memory documents' BM25 on the scale of every candidate's: the best memory
    document counts `share`, not 1, where the memory side's best lexical match is only that share
    of the best among all candidates (`memory_lexical_share`)."""
    documents = list(found)
    top = max((bm25 for _, _, bm25 in documents), default=0.0) or 1.0
    return [
        MemoryCandidate(memory_id, {"memory": share * bm25 / top, "memory_dense": max(dense, 0.0)})
        for memory_id, dense, bm25 in documents
    ]


def memory_lexical_share(pooled: Mapping[str, float], indexed: Iterable[str]) -> float:
    """The memory side's lexical standing among all candidates: the best BM25 of the indexed turn
    candidates (`indexed`, their keys in `pooled`) over the best of the whole pool (indexed and
    buffered turns scored together). 1 where there is nothing to compare: no indexed turn (the
    memory documents are then the memory side's only lexical evidence) or no match at all."""
    top = max(pooled.values(), default=0.0)
    keys = list(indexed)
    if not top or not keys:
        return 1.0
    return max(pooled.get(key, 0.0) for key in keys) / top
