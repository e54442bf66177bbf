"""The protocol's reference retrievers, one document per turn with the text "speaker: text".

- BM25: k1 1.5, b 0.75, lower-case words, a short list of English function words removed, no
  stemming (the settings of the figure in docs/evaluation.md);
- dense: all-MiniLM-L6-v2 cosine (through the run's shared cache);
- the turn-level fusion of issue #14: stemmed BM25 (the engine's analyzer, k1 0.9, b 0.3) over
  each turn and over its ±1 window within the session, the session date in both texts, each
  min-max normalised per question and mixed 0.25 / 0.25 / 0.5 with the MiniLM cosine.
"""

from __future__ import annotations

import re
from typing import Any

from bench.quality.locomo.data import Conversation, Question
from memory_engine.ports import Embedder
from memory_engine.retrieval.bm25 import Bm25
from memory_engine.retrieval.text import tokenize

_WORD = re.compile(r"\w+")
_STOP_WORDS_TEXT = """
    a an the and or but if of at by for with about to from in on is are was were be been being do does
    did have has had i you he she it we they me him her us them my your his its our their what which who
    whom whose when where why how this that these those am will would can could should shall may might
    must not no so than too very just
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


def words(text: str) -> list[str]:
    return [word for word in _WORD.findall(text.lower()) if word not in STOP_WORDS]


class Bm25Turns:
    """BM25 over one conversation's turns."""

    def __init__(self, conversation: Conversation, k1: float = 1.5, b: float = 0.75) -> None:
        self._index = Bm25(k1=k1, b=b)
        self._order = {turn.dia_id: i for i, turn in enumerate(conversation.turns)}
        for turn in conversation.turns:
            self._index.add(turn.dia_id, words(turn.line()))

    def rank(self, question: Question) -> list[str]:
        scores = self._index.scores(words(question.question))
        # Ties go to the earlier turn, so the ranking does not depend on hashing.
        return sorted(scores, key=lambda dia_id: (-scores[dia_id], self._order[dia_id]))


class DenseTurns:
    """Cosine between the question's and each turn's MiniLM vectors (unit-normalised)."""

    def __init__(self, conversation: Conversation, embedder: Embedder) -> None:
        import numpy as np

        self._ids = [turn.dia_id for turn in conversation.turns]
        lines = [turn.line() for turn in conversation.turns]
        self._matrix = np.asarray(embedder.embed(lines, mode="passage"), dtype=np.float32)
        self._embedder = embedder

    def rank(self, question: Question) -> list[str]:
        import numpy as np

        query = np.asarray(self._embedder.embed([question.question], mode="query")[0], dtype=np.float32)
        order = np.argsort(-(self._matrix @ query), kind="stable")  # ties: the earlier turn first
        return [self._ids[i] for i in order]


class TurnFusion:
    """Issue #14's turn-level fusion: one document per turn, three signals, fixed weights."""

    def __init__(self, conversation: Conversation, embedder: Embedder) -> None:
        import numpy as np

        turns = conversation.turns
        dates = {s.number: f"{s.date.day} {s.date:%B %Y}" for s in conversation.sessions}
        self._ids = [turn.dia_id for turn in turns]
        self._turn, self._window = Bm25(k1=0.9, b=0.3), Bm25(k1=0.9, b=0.3)
        for i, turn in enumerate(turns):
            near = (turns[j] for j in (i - 1, i, i + 1) if 0 <= j < len(turns))
            around = [other.line() for other in near if other.session == turn.session]
            date = dates[turn.session]
            self._turn.add(turn.dia_id, tokenize(f"{turn.line()}\n{date}"))
            self._window.add(turn.dia_id, tokenize("\n".join([*around, date])))
        lines = [turn.line() for turn in turns]
        self._matrix = np.asarray(embedder.embed(lines, mode="passage"), dtype=np.float32)
        self._embedder = embedder

    def rank(self, question: Question) -> list[str]:
        import numpy as np

        terms = tokenize(question.question)
        query = np.asarray(self._embedder.embed([question.question], mode="query")[0], dtype=np.float32)
        turn, window = self._turn.scores(terms), self._window.scores(terms)
        parts = [
            (0.25, np.asarray([turn.get(i, 0.0) for i in self._ids])),
            (0.25, np.asarray([window.get(i, 0.0) for i in self._ids])),
            (0.5, self._matrix @ query),
        ]
        fused = sum(weight * _min_max(values) for weight, values in parts)
        order = np.argsort(-fused, kind="stable")
        return [self._ids[i] for i in order]


def _min_max(values: Any) -> Any:
    low, high = float(values.min()), float(values.max())
    return (values - low) / (high - low) if high > low else values * 0.0
