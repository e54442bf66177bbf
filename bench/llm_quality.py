"""What the LLM extraction benchmark measures of one answer (bench/llm_extraction.py): its fields
against their bounds, the language kept, grounding in the source turns, and the characters.

Pure functions over the model's validated answer (`MemoryOut`, before the extractor trims it to
the bounds) and the memory fields made from it, so they are tested without a model.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memory_engine.extraction.schema import (
    MAX_KEY_FACTS,
    MAX_KEYWORDS,
    MAX_QUOTES_PER_CHARACTER,
    MAX_SUMMARY_SENTENCES,
    MemoryOut,
    first_sentences,
)
from memory_engine.retrieval.text import tokenize

# A statement is grounded when at least this share of its content terms occur in the turns: a
# paraphrase keeps most of its words, an invented detail ("a single mother") brings its own.
GROUNDED_SHARE = 0.8
_DIGITS = re.compile(r"^\d+$")
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def sentence_count(text: str) -> int:
    """Sentences in `text` as the extractor counts them when it trims a summary."""
    count = 0
    while text.strip():
        count += 1
        head = first_sentences(text, 1)
        text = text[len(head) :] if head != text.strip() else ""
    return count


def limits(out: MemoryOut) -> dict[str, Any]:
    """The answer's sizes against docs/api.md's bounds, and the fields it left empty."""
    quotes: dict[str, int] = {}
    for quote in out.key_dialogue:
        quotes[quote.speaker.casefold()] = quotes.get(quote.speaker.casefold(), 0) + 1
    sizes = {
        "keywords": len(out.keywords),
        "key_facts": len(out.key_facts),
        "max_quotes_per_character": max(quotes.values(), default=0),
        "summary_sentences": sentence_count(out.summary),
    }
    within = (
        sizes["keywords"] <= MAX_KEYWORDS
        and sizes["key_facts"] <= MAX_KEY_FACTS
        and sizes["max_quotes_per_character"] <= MAX_QUOTES_PER_CHARACTER
        and sizes["summary_sentences"] <= MAX_SUMMARY_SENTENCES
    )
    empty = [
        name
        for name, value in (
            ("summary", out.summary),
            ("keywords", out.keywords),
            ("key_facts", out.key_facts),
            ("key_dialogue", out.key_dialogue),
            ("intent", out.intent),
            ("location", out.location),
            ("characters", out.characters),
        )
        if not value
    ]
    return {**sizes, "within": within, "empty": empty}


def hangul_share(text: str) -> float | None:
    """Hangul syllables among the letters of `text` (None when it has no letters)."""
    letters = [char for char in text if char.isalpha()]
    if not letters:
        return None
    hangul = sum(1 for char in letters if unicodedata.name(char, "").startswith("HANGUL"))
    return hangul / len(letters)


def content_terms(text: str) -> set[str]:
    """The retrieval index's terms of `text` (stemmed English; Korean morphemes, particle-stripped
    forms and bigrams), numbers left out."""
    return {term for term in tokenize(text) if not _DIGITS.match(term)}


def content_words(text: str) -> list[set[str]]:
    """The terms of each content word of `text` (stop words and numbers give none and are left out)."""
    words = (content_terms(word) for word in _WORDS.findall(text))
    return [terms for terms in words if terms]


def grounded(statement: str, source: set[str]) -> bool:
    """Whether GROUNDED_SHARE of the statement's content words occur in the source: a word occurs
    when any of its terms does ("입양했다" meets "입양했어" in their morpheme 입양)."""
    words = content_words(statement)
    return bool(words) and sum(1 for terms in words if terms & source) / len(words) >= GROUNDED_SHARE


def _quote_text(line: str) -> str:
    speaker, colon, quote = line.partition(": ")
    return quote if colon and len(speaker) <= 40 else line


def grounding(key_facts: Sequence[str], key_dialogue: Sequence[str], turns: Sequence[str]) -> dict[str, int]:
    """Key facts and quotes whose content terms (GROUNDED_SHARE of them) occur in the turns."""
    source = set().union(*(content_terms(text) for text in turns)) if turns else set()
    quotes = [_quote_text(line) for line in key_dialogue]
    return {
        "facts": len(key_facts),
        "facts_grounded": sum(grounded(fact, source) for fact in key_facts),
        "quotes": len(quotes),
        "quotes_grounded": sum(grounded(quote, source) for quote in quotes),
    }


def _key(name: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", name)).strip().casefold()


def _matches(names: Iterable[str], person: Sequence[str]) -> int:
    """How well a model character's names meet one expected person's: 2 exact, 1 contained
    ("서연의 엄마" holds 엄마, "김 원장님" holds 김 원장), 0 not at all."""
    keys = {_key(name) for name in names if _key(name)}
    wanted = {_key(name) for name in person if _key(name)}
    if keys & wanted:
        return 2
    return int(any(len(want) >= 2 and want in key for key in keys for want in wanted))


def characters(
    found: Mapping[str, Sequence[str]],
    expected: Mapping[str, Sequence[str]],
    optional: Sequence[str] = (),
) -> dict[str, Any]:
    """The model's characters (canonical name → aliases) against the people the turns hold
    (name → other names; `optional` names may appear or not, e.g. the assistant).

    `missing`: expected people no character stands for; `extra`: characters that are none of
    them; `split`: people two characters stand for (aliases not merged); `conflated`: characters
    whose names point at two people (as when every character got the alias "none")."""
    people = {name: [name, *aliases] for name, aliases in expected.items()}
    hits: dict[str, list[str]] = {name: [] for name in people}
    extra: list[str] = []
    conflated: list[str] = []
    for name, aliases in found.items():
        names = [name, *aliases]
        scores = {person: _matches(names, forms) for person, forms in people.items()}
        best = max(scores.values(), default=0)
        if best == 0:
            if not _matches(names, list(optional)):
                extra.append(name)
            continue
        exact = [person for person, score in scores.items() if score == 2]
        if len(exact) > 1:
            conflated.append(name)
        person = next(person for person, score in scores.items() if score == best)
        hits[person].append(name)
    return {
        "expected": len(people),
        "found": len(found),
        "matched": sum(1 for names in hits.values() if names),
        "missing": [person for person, names in hits.items() if not names],
        "extra": extra,
        "split": [person for person, names in hits.items() if len(names) > 1],
        "conflated": conflated,
    }
