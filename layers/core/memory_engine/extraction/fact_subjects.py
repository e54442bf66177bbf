"""Whose one-value fact a key fact states, and which one (`fact_slots`), in the shapes extractors write.

Supersession pairs statements by slot and character (`usecases/supersede.py`). The built-in
extractor writes a key fact as its speaker's line, "Mina: I moved to Seoul."; an LLM writes what it
read, mostly in the third person: "Mina moved to Seoul last week.", "미나는 서울로 이사했다.",
"Hana's favorite food is pizza now." Read as they are, those name no one (`slot_of` reads the
speaker's own statements: "I live in", "the user works as"), so an LLM's facts never replaced one
another nor a built-in one (issue #45, docs/research/extraction.md). Here a fact that opens with a
character's name is read as that character's own statement: the name and its particle taken off,
and in English the sentence turned into the first person ("Mina is dating Leo" → "I am dating Leo",
"Jae quit his job" → "I quit my job", "Hana's trip" → "my trip") before its slot is read.

The reading is as narrow as `slot_of`: a fact about someone else of the character's ("Mina's sister
lives in Porto" → "my sister lives in Porto") or in the past ("Mina lived in Busan") states nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_engine.extraction.fact_slots import Slot, slot_of

# A speaker's line, "Mina: I moved to Seoul." (the built-in extractor's and quotes' shape).
_SPEAKER_CHARS = 40
# In English, after the name: the verb or possessive that follows it in the third person.
_EN_TO_FIRST: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:'s|’s|'|’)\s+", re.I), "my "),
    (re.compile(r"^and\s+\w+\s+", re.I), "we "),
    (re.compile(r"^is\b", re.I), "I am"),
    (re.compile(r"^has\b", re.I), "I have"),
    (re.compile(r"^does\b", re.I), "I do"),
)
_EN_THEIR = re.compile(r"\b(?:his|her|their)\b", re.I)
# In Korean, the name's particle: subject, topic, "also", honorific subject, possessive; a name
# ending in a consonant often takes 이 before it in speech ("지훈이가").
_KO_PARTICLE = re.compile(r"^(?:이)?(?:은|는|이|가|도|께서|의)\s+")
_HANGUL = re.compile(r"[가-힣]")


def stated(line: str, characters: Sequence[str]) -> tuple[Slot, str] | None:
    """The slot a key fact states and whose it is (the character's canonical name; "" when the
    fact names no one), or None when it states no one-value fact."""
    subject, separator, text = line.partition(": ")
    if separator and 0 < len(subject.strip()) <= _SPEAKER_CHARS:
        slot = slot_of(text)
        return (slot, subject.strip()) if slot is not None else None
    for name in sorted({c.strip() for c in characters if c.strip()}, key=len, reverse=True):
        own = as_own_statement(line.strip(), name)
        if own is not None:
            slot = slot_of(own)
            return (slot, name) if slot is not None else None
    slot = slot_of(line)
    return (slot, "") if slot is not None else None


def as_own_statement(text: str, name: str) -> str | None:
    """`text`, a sentence about `name` that opens with it, as `name` would say it; None when it
    does not open with the name."""
    if not text.startswith(name):
        return None
    rest = text[len(name) :]
    if _HANGUL.search(name):
        particle = _KO_PARTICLE.match(rest)
        return rest[particle.end() :] if particle else None
    if rest[:1].isalnum():
        return None  # "Minato ..." does not open with "Mina"
    rest = rest.lstrip()
    for pattern, first in _EN_TO_FIRST:
        if pattern.match(rest):
            return _EN_THEIR.sub("my", pattern.sub(first, rest, count=1))
    if rest.startswith(("'", "’")):
        return None
    return _EN_THEIR.sub("my", f"I {rest}")
