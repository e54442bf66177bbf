"""Whose line a turn is, against the names a question uses ("What did Caroline paint?").

A turn reads "speaker: line" (`Turn.text`: the user's name, then the character or assistant that
answered), and so do the turn documents of the index on every backend. A question that names a
person is more often answered by a line that person said (or heard: both speakers of a turn count)
than by one that only mentions them; measured on LoCoMo (docs/retrieval.md), the fusion adds
the `speaker` feature (retrieval.features), weighted by its `speaker` weight, to such a turn's score.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from memory_engine.retrieval.text import tokenize

__all__ = ["SpeakerMatch", "speakers"]

# A speaker label starts a line and ends at its first colon; longer labels are prose, not names.
_SPEAKER = re.compile(r"^([^:\n]{1,60}):", re.MULTILINE)


def speakers(text: str) -> list[str]:
    """The speaker labels of a turn's text, in order ("Alex: hi\\nMira: hello" → Alex, Mira)."""
    return [label.strip() for label in _SPEAKER.findall(text)]


@lru_cache(maxsize=4096)
def _name_terms(name: str) -> frozenset[str]:
    # Analysed like the question, so "Caroline's", "지훈이" and "지훈 씨" meet the name's terms.
    return frozenset(tokenize(name))


class SpeakerMatch:
    """Built once per question from its terms (`Query.terms`): 1.0 for a turn one of whose
    speakers the question names (every term of the name among the question's terms), else 0.0.
    A name made only of stop words ("I", "you") matches nothing."""

    __slots__ = ("_terms",)

    def __init__(self, terms: Iterable[str]) -> None:
        self._terms = frozenset(terms)

    def __call__(self, text: str) -> float:
        return self.among(speakers(text))

    def among(self, names: Iterable[str]) -> float:
        """The same match against speaker labels read beforehand (`speakers`)."""
        if not self._terms:
            return 0.0
        for name in names:
            terms = _name_terms(name)
            if terms and terms <= self._terms:
                return 1.0
        return 0.0
