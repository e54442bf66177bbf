"""Precision and recall per memory field against the labelled set (see `bench.extraction.data`).

Matching is deliberately loose about wording and strict about content, so an LLM's paraphrase
and the built-in extractor's quotes are judged alike:
- characters: a name matches an expected one when the words of one contain the other's
  ("Dr. Alvarez" and "Alvarez"), case ignored.
- keywords: a keyword is right when each of its words is in the conversation's vocabulary (or
  names an expected character or location item); an expected keyword is found when a keyword
  equals it or holds it as a whole word ("한강" in "한강 공원").
- location: the field is cut into items at commas, full stops and labels ("Place:", "장소:");
  an item that is only a date (the turns' own timestamps) is neither right nor wrong; an item is
  right when its words contain an expected item's or the reverse.
- intent: the field is cut into sentences; one is right when it holds an expected phrase.
  Filler ("... is what the conversation is mainly about") holds none, so it counts against.
- key facts: a fact is right when it holds every cue of some expected fact; an expected fact is
  found when some fact holds all its cues.
Totals are micro-averaged: right items over produced items, found items over expected items.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bench.extraction.data import Conversation, ExpectedMemory
from memory_engine.models.domain import MemoryFields

FIELDS = ("characters", "keywords", "intent", "location", "key_facts")

_LABELS = re.compile(r"\b(?:Place|Time|Weather|Date|Location)\s*:|(?:장소|시간|날씨|날짜|위치)\s*:", re.I)
_ITEM_SPLIT = re.compile(r"[,;/·]|(?<![0-9])\.(?![0-9])|\s+and\s+")
_DATE_ONLY = re.compile(r"^[\d\s\-~:./T+]+$")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"'”’)]*\s+")
_TITLES = frozenset({"dr", "dr.", "mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "captain"})


def _words(text: str) -> tuple[str, ...]:
    return tuple(word for word in re.findall(r"[\w'’-]+", text.casefold()) if word not in _TITLES)


def _contains(longer: Sequence[str], shorter: Sequence[str]) -> bool:
    """Whether `shorter` occurs in `longer` as a run of whole words."""
    size = len(shorter)
    return size > 0 and any(
        tuple(longer[i : i + size]) == tuple(shorter) for i in range(len(longer) - size + 1)
    )


def _either_contains(left: str, right: str) -> bool:
    a, b = _words(left), _words(right)
    return _contains(a, b) or _contains(b, a)


def holds(text: str, cue: str) -> bool:
    """Whether `text` holds one of the cue's `|`-separated alternatives (case ignored)."""
    folded = text.casefold()
    return any(alternative.strip().casefold() in folded for alternative in cue.split("|"))


@dataclass
class Tally:
    """Counts for one field: right of produced, found of expected."""

    right: int = 0
    produced: int = 0
    found: int = 0
    expected: int = 0

    def add(self, other: Tally) -> None:
        self.right += other.right
        self.produced += other.produced
        self.found += other.found
        self.expected += other.expected

    @property
    def precision(self) -> float:
        return self.right / self.produced if self.produced else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.expected if self.expected else 1.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "precision": round(self.precision, 3),
            "recall": round(self.recall, 3),
            "right": self.right,
            "produced": self.produced,
            "found": self.found,
            "expected": self.expected,
        }


@dataclass
class MemoryScore:
    memory_id: str
    tallies: dict[str, Tally] = field(default_factory=dict)
    wrong: dict[str, list[str]] = field(default_factory=dict)  # produced items judged wrong
    missed: dict[str, list[str]] = field(default_factory=dict)  # expected items not found


def _count(
    produced: Sequence[str], expected: Sequence[str], right: Iterable[bool], found: Iterable[bool]
) -> Tally:
    return Tally(sum(right), len(produced), sum(found), len(expected))


def location_items(location: str) -> list[str]:
    """The location field's items, its labels and date-only items left out."""
    pieces = (piece.strip(" \"'") for piece in _ITEM_SPLIT.split(_LABELS.sub(",", location)))
    return [piece for piece in pieces if piece and not _DATE_ONLY.match(piece)]


def intent_sentences(intent: str) -> list[str]:
    return [piece.strip() for piece in _SENTENCE_END.split(intent) if piece.strip()]


def score_memory(
    memory_id: str, fields: MemoryFields, expected: ExpectedMemory, vocabulary: str
) -> MemoryScore:
    """Every field of one produced memory against its labels."""
    result = MemoryScore(memory_id)

    def judge(
        name: str, produced: list[str], wanted: list[str], right: list[bool], found: list[bool]
    ) -> None:
        result.tallies[name] = _count(produced, wanted, right, found)
        result.wrong[name] = [item for item, ok in zip(produced, right, strict=True) if not ok]
        result.missed[name] = [item for item, ok in zip(wanted, found, strict=True) if not ok]

    characters = fields.characters
    judge(
        "characters",
        characters,
        expected.characters,
        [any(_either_contains(name, want) for want in expected.characters) for name in characters],
        [any(_either_contains(name, want) for name in characters) for want in expected.characters],
    )

    allowed = set(vocabulary.casefold().split())
    for phrase in (*expected.keywords, *expected.characters, *expected.location):
        allowed.update(_words(phrase))
    keywords = fields.keywords
    judge(
        "keywords",
        keywords,
        expected.keywords,
        [bool(_words(k)) and all(word in allowed for word in _words(k)) for k in keywords],
        [any(_contains(_words(k), _words(want)) for k in keywords) for want in expected.keywords],
    )

    items = location_items(fields.location)
    judge(
        "location",
        items,
        expected.location,
        [any(_either_contains(item, want) for want in expected.location) for item in items],
        [any(_either_contains(item, want) for item in items) for want in expected.location],
    )

    sentences = intent_sentences(fields.intent)
    judge(
        "intent",
        sentences,
        expected.intent,
        [any(holds(sentence, want) for want in expected.intent) for sentence in sentences],
        [holds(fields.intent, want) for want in expected.intent],
    )

    facts = fields.key_facts
    wanted = [" + ".join(cues) for cues in expected.key_facts]
    judge(
        "key_facts",
        facts,
        wanted,
        [any(all(holds(fact, cue) for cue in cues) for cues in expected.key_facts) for fact in facts],
        [any(all(holds(fact, cue) for cue in cues) for fact in facts) for cues in expected.key_facts],
    )
    return result


def score_all(
    conversations: Sequence[Conversation], produced: dict[str, MemoryFields]
) -> tuple[dict[str, dict[str, Tally]], list[MemoryScore]]:
    """Totals per language ("en", "ko") and over the dev split ("all"), and over the held-out
    conversations ("held-out"), field by field, and the per-memory scores. A memory missing from
    `produced` counts as one with every field empty."""
    totals: dict[str, dict[str, Tally]] = {}
    scores: list[MemoryScore] = []
    for conversation in conversations:
        for memory_id, expected in zip(conversation.memory_ids(), conversation.memories, strict=True):
            fields = produced.get(memory_id, MemoryFields(summary=""))
            memory = score_memory(memory_id, fields, expected, conversation.vocabulary)
            scores.append(memory)
            groups = (conversation.language, "all") if conversation.split == "dev" else (conversation.split,)
            for group in groups:
                bucket = totals.setdefault(group, {name: Tally() for name in FIELDS})
                for name in FIELDS:
                    bucket[name].add(memory.tallies[name])
    return totals, scores
