"""A turn's retrieval work done once, when it arrives, off the request path: its passage vector
into the process's cache (`turn_vectors.warm`) and its words analysed (`turn_terms`), whole
(within the head BM25 reads), where a retrieve would analyse only a budget of them per call.

The local server's background step calls this for every newly buffered turn (`engine.arrivals`);
a retrieve then scores the turn by its vector and its words without doing either itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memory_engine.engine import Engine
from memory_engine.indexing.documents import turn_lexical_text
from memory_engine.models.domain import Turn
from memory_engine.usecases import turn_terms, turn_vectors


def prepare(engine: Engine, turns: Sequence[Turn]) -> int:
    """Analyse the words of `turns` and embed those with no vector yet; returns how many were
    embedded. Nothing is written: the cache is the process's, the stored vector the worker's."""
    turn_terms.analysed(
        engine,
        [(str(n), turn_lexical_text(turn, engine.retrieval)) for n, turn in enumerate(turns)],
        math.inf,
    )
    return turn_vectors.warm(engine, turns)
