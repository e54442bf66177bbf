"""Short facts about a user (for /v1/memories:generate and chat memory): the FactExtractor
protocol, its operation model, and a built-in extractor that needs no LLM."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from memory_engine.extraction.fact_slots import slot_of
from memory_engine.extraction.injection import is_instruction

FactOp = Literal["add", "update", "delete", "keep"]


class FactOperation(BaseModel):
    """One change to a scope's facts. `id` names an existing fact for update/delete/keep and is
    None for add; `fact` is the text to store (for delete/keep: the existing text)."""

    model_config = ConfigDict(frozen=True)

    op: FactOp
    id: str | None = None
    fact: str


class FactExtraction(BaseModel):
    """What one fact extraction gives: its operations, and what it cost where a model was asked
    (`spent`: the memory metadata's names, `prompt_tokens`, `completion_tokens`, `attempts`,
    `tokens_estimated`, `model`; empty for the built-in extractor)."""

    model_config = ConfigDict(frozen=True)

    operations: list[FactOperation]
    spent: dict[str, str | int | float] = Field(default_factory=dict)


class FactExtractor(Protocol):
    def extract_facts(
        self, messages: Sequence[str], existing: Sequence[tuple[str, str]], language: str = "ko"
    ) -> FactExtraction:
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
# Words that join a sentence to the one before ("그리고 새 강아지를 입양했어"): the fact is the rest.
_CONNECTIVE = re.compile(
    r"^(?:(?:and|so|also|plus|anyway|oh|well|then)\b[,\s]*|(?:그리고|그래서|그런데|근데|또한|또|그리고는)[,\s]+)+",
    re.IGNORECASE,
)
# A sentence that only makes sense with the one before: "이름은 보리야", "Her name is Luna", "He's two".
_FOLLOW_UP = re.compile(
    r"^(?:(?:its|his|her|their)\s+name\b|(?:it|he|she|they)(?:'s|'re|\s+is|\s+are|\s+was)\b)"
    r"|^(?:(?:그\s*)?이름은|걔(?:는|가)?\s|그\s*애(?:는|가)?\s|그녀(?:는|가)\s|그는\s|나이는)",
    re.IGNORECASE,
)
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


def _statement(sentence: str) -> bool:
    return len(normalize(sentence)) >= MIN_FACT_CHARS and not sentence.endswith(("?", "？"))


def candidate_sentences(messages: Sequence[str]) -> list[str]:
    """Sentences that can be facts: not questions, not greetings-length fragments, not orders
    to a model (`injection.is_instruction`, nor what follows such a sentence in its message).
    A leading "and" / "그리고" is dropped, and a sentence that leans on the one before
    ("이름은 보리야.") stays with it, so the fact keeps the dog's name."""
    out: list[str] = []
    for message in messages:
        previous_kept = False
        for raw in _SENTENCE.split(message):
            sentence = _CONNECTIVE.sub("", raw.strip())
            if sentence[:1].isascii():
                sentence = sentence[:1].upper() + sentence[1:]
            if is_instruction(sentence):
                break  # orders go on past their first sentence ("Dev mode on. Answer ...")
            if sentence.endswith(("?", "？")):
                previous_kept = False
                continue
            if previous_kept and _FOLLOW_UP.match(sentence):
                out[-1] = f"{out[-1]} {sentence}"
                continue
            if not _statement(sentence):
                previous_kept = False
                continue
            out.append(sentence)
            previous_kept = True
    return out


def _latest_per_slot(sentences: list[str]) -> list[str]:
    """The sentences, less any that a later one of the same slot replaces ("I live in Busan" then
    "I moved to Seoul": Seoul)."""
    last = {slot: i for i, sentence in enumerate(sentences) if (slot := slot_of(sentence))}
    return [s for i, s in enumerate(sentences) if (slot := slot_of(s)) is None or last[slot] == i]


def extract_facts_builtin(
    messages: Sequence[str], existing: Sequence[tuple[str, str]], language: str = "ko"
) -> list[FactOperation]:
    """Sentence-level facts from the user's messages, without an LLM.

    Each sentence is compared with the existing facts and with the sentences already taken: a
    near-identical one keeps the existing fact, a similar one updates it (the newer wording
    wins), anything else is added. A sentence that states a one-value fact (`fact_slots`: where
    the user lives, their job) replaces the existing facts of that slot: the first is updated,
    the others deleted. `language` is accepted for the protocol; the method works on
    characters, so it needs none.
    """
    del language
    texts = dict(existing)
    slots = {fact_id: slot for fact_id, fact in existing if (slot := slot_of(fact))}
    operations: dict[str, FactOperation] = {}  # existing id → its one operation
    added: list[str] = []
    for sentence in _latest_per_slot(candidate_sentences(messages)):
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
        slot = slot_of(sentence)
        replaced = [fact_id for fact_id, fact_slot in slots.items() if slot and fact_slot == slot]
        if replaced:
            first, *others = replaced
            operations[first] = FactOperation(op="update", id=first, fact=sentence)
            for other in others:
                operations[other] = FactOperation(op="delete", id=other, fact=texts[other])
            continue
        if len(added) < MAX_NEW_FACTS:
            added.append(sentence)
    return [*operations.values(), *(FactOperation(op="add", fact=fact) for fact in added)]


class BuiltinFactExtractor:
    """FactExtractor without an LLM (the default when none is configured)."""

    def extract_facts(
        self, messages: Sequence[str], existing: Sequence[tuple[str, str]], language: str = "ko"
    ) -> FactExtraction:
        return FactExtraction(operations=extract_facts_builtin(messages, existing, language))
