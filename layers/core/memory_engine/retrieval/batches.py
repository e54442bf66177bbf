"""A buffered turn's batch as its document (`RetrievalConfig.buffered_batches`, issue 41).

A memory is scored as one document holding its whole batch of dialogue, while a buffered turn has
only its own line: beside memories, the answers still buffered lost by the memory documents' BM25.
The buffered turns of each session are cut here into the runs extraction will turn into memories
and each run is scored as one document, so a buffered turn's own-document BM25 is its run's.
"""

from __future__ import annotations

from collections.abc import Mapping

from memory_engine.models.domain import Turn
from memory_engine.retrieval.bm25 import TermCounts, bm25_counted
from memory_engine.retrieval.features import AnalysedText, Query

__all__ = ["documents", "side_share"]


def side_share(lexical: Mapping[str, float], turns: Mapping[str, Turn], scale: float | None) -> float:
    """The buffered side's lexical standing in the pool (`features.memory_lexical_share`'s mirror):
    the best buffered turn's BM25 over the pool's best; 1 where nothing matched."""
    if not scale:
        return 1.0
    return max((lexical.get(key, 0.0) for key in turns), default=0.0) / scale


def documents(
    turns: Mapping[str, Turn], read: Mapping[str, AnalysedText], query: Query, size: int, share: float
) -> dict[str, float]:
    """Each buffered turn's batch BM25 (`RetrievalConfig.buffered_batches`): a session's buffered
    turns in order, cut into runs of `size` from the oldest (as extraction will cut them), each
    run's analysed terms counted as one document and scored over the runs; over the best run,
    times `share` (the buffered side's, to the configured power). A turn whose run matched nothing
    gets 0; a turn not analysed (past the request's budget) takes its run's score all the same."""
    by_session: dict[str, list[tuple[int, str]]] = {}
    for key, turn in turns.items():
        by_session.setdefault(turn.session_uuid, []).append((turn.seq, key))
    runs: dict[str, list[str]] = {}
    for session, ordered in by_session.items():
        keys = [key for _, key in sorted(ordered)]
        for start in range(0, len(keys), size):
            runs[f"{session}:{start}"] = keys[start : start + size]
    counted = {
        name: TermCounts.joined(read[key].terms for key in keys if key in read) for name, keys in runs.items()
    }
    scores = bm25_counted(counted, query.terms)
    top = max(scores.values(), default=0.0) or 1.0
    return {key: scores.get(name, 0.0) / top * share for name, keys in runs.items() for key in keys}
