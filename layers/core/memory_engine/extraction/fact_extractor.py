"""Short facts about a user (for /v1/memories:generate and chat memory): the FactExtractor
protocol, its operation model, and a built-in extractor that needs no LLM."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

FactOp = Literal["add", "update", "delete", "keep"]


class FactOperation(BaseModel):
    """One change to a scope's facts. `id` names an existing fact for update/delete/keep and is
    None for add; `fact` is the text to store (for delete/keep: the existing text)."""

    model_config = ConfigDict(frozen=True)

    op: FactOp
    id: str | None = None
    fact: str


class FactExtractor(Protocol):
    def extract_facts(
        self, messages: Sequence[str], existing: Sequence[tuple[str, str]], language: str = "ko"
    ) -> list[FactOperation]:
        """Facts worth remembering from the user's `messages`, merged with the scope's `existing`
        `(id, fact)` pairs: operations only ever name ids from `existing`. Existing facts the
        messages do not touch need no operation."""
        ...


# From KEEP_AT up a new sentence repeats an existing fact (keep it); from UPDATE_AT up it is the
# same fact with a changed detail (update it). Bigrams cannot tell "my sister lives in Busan" from
# "my brother lives in Busan" (0.74), so the bars are high: when in doubt a sentence is added
# next to the old fact rather than replacing it. The LLM extractor is the accurate path.
KEEP_AT = 0.9
UPDATE_AT = 0.7
MIN_FACT_CHARS = 8
MAX_NEW_FACTS = 20

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_NOT_WORD = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Case, punctuation and spacing removed: what two ways of writing one sentence share."""
    return _SPACES.sub(" ", _NOT_WORD.sub(" ", text.casefold())).strip()


def _bigrams(text: str) -> set[str]:
    squeezed = text.replace(" ", "")
    return {squeezed[i : i + 2] for i in range(len(squeezed) - 1)} or {squeezed}


def similarity(left: str, right: str) -> float:
    """Dice coefficient of character bigrams over normalized text. Characters rather than words,
    because Korean glues particles to words ("서울에", "서울로") and words would never match."""
    a, b = _bigrams(normalize(left)), _bigrams(normalize(right))
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def candidate_sentences(messages: Sequence[str]) -> list[str]:
    """Sentences that can be facts: not questions, not greetings-length fragments."""
    out: list[str] = []
    for message in messages:
        for sentence in _SENTENCE.split(message):
            sentence = sentence.strip()
            if len(normalize(sentence)) >= MIN_FACT_CHARS and not sentence.endswith(("?", "？")):
                out.append(sentence)
    return out


def extract_facts_builtin(
    messages: Sequence[str], existing: Sequence[tuple[str, str]], language: str = "ko"
) -> list[FactOperation]:
    """Sentence-level facts from the user's messages, without an LLM.

    Each sentence is compared with the existing facts and with the sentences already taken: a
    near-identical one keeps the existing fact, a similar one updates it (the newer wording
    wins), anything else is added. `language` is accepted for the protocol; the method works on
    characters, so it needs none.
    """
    del language
    texts = dict(existing)
    operations: dict[str, FactOperation] = {}  # existing id → its one operation
    added: list[str] = []
    for sentence in candidate_sentences(messages):
        if any(similarity(sentence, other) >= UPDATE_AT for other in added):
            continue
        best_id, best_score = None, 0.0
        for fact_id, fact in existing:
            score = similarity(sentence, fact)
            if score > best_score:
                best_id, best_score = fact_id, score
        if best_id is not None and best_score >= UPDATE_AT:
            if best_id not in operations:
                operations[best_id] = (
                    FactOperation(op="keep", id=best_id, fact=texts[best_id])
                    if best_score >= KEEP_AT
                    else FactOperation(op="update", id=best_id, fact=sentence)
                )
            continue
        if len(added) < MAX_NEW_FACTS:
            added.append(sentence)
    return [*operations.values(), *(FactOperation(op="add", fact=fact) for fact in added)]


class BuiltinFactExtractor:
    """FactExtractor without an LLM (the default when none is configured)."""

    def extract_facts(
        self, messages: Sequence[str], existing: Sequence[tuple[str, str]], language: str = "ko"
    ) -> list[FactOperation]:
        return extract_facts_builtin(messages, existing, language)
