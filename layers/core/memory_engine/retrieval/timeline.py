"""Retrieve knows time: what a question asks about, which hits still hold, and the event-time window.

Kept apart from ranking (features, fusion): superseded facts are not scored lower, they are put
after what replaced them. A hit is not current when a later statement replaced one of its facts
that the query asks about ("where do I live now?" asks about residence: a memory whose residence
was replaced is not current for it, though its other facts still hold). A query that names no
topic (`query_topics` empty) asks about none, so it is ranked as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_engine.models.api import FactHistory
from memory_engine.models.domain import Memory
from memory_engine.models.life import EventDate, KeyFactLife
from memory_engine.ports import Period

_I = re.IGNORECASE
# A question's words for each slot family of `extraction.fact_slots` ("pet" covers "pet:dog").
_TOPICS: dict[str, re.Pattern[str]] = {
    "residence": re.compile(
        r"\b(?:live|lives|living|reside|home|moved?|moving|city|town)\b|살아|살고|사는|이사",
        _I,
    ),
    "job": re.compile(
        r"\b(?:job|work|works|working|career|employ\w*|profession|occupation)\b|직업|일해|일하|무슨\s*일|회사|직장",
        _I,
    ),
    "relationship": re.compile(
        r"\b(?:dating|girlfriend|boyfriend|partner|married|wife|husband|single|relationship|broke\s+up|engaged)\b"
        r"|여자\s*친구|남자\s*친구|애인|사귀|결혼|헤어|연애",
        _I,
    ),
    "pet": re.compile(r"\b(?:pets?|dogs?|puppy|cats?|kitten)\b|반려|강아지|고양이|개를|개가|냥이", _I),
    "preference": re.compile(
        r"\b(?:favou?rite|prefer\w*|like|likes|love|diet|vegetarian|vegan)\b|좋아하|선호|채식|비건",
        _I,
    ),
    "plan": re.compile(
        r"\b(?:plan\w*|trip|travel\w*|vacation|holiday|cancel\w*)\b|계획|여행|휴가|취소|갈\s*거", _I
    ),
    "health": re.compile(
        r"\b(?:health|sick|ill|injur\w*|hurt|broken?|recover\w*|doctor|hospital)\b|건강|아파|다쳤|병원|나았",
        _I,
    ),
    "possession": re.compile(r"\b(?:car|drive|phone)\b|자동차|차를|차는|폰", _I),
}


# A question about the past ("before", "used to", "first", "where did she live", "예전", "살았어?")
# asks for the earlier value: the replaced fact is the answer, so nothing is put before it. One
# that says "now", "still", "지금", "아직" asks for the current value whatever its tense.
_PAST = re.compile(
    r"\b(?:before|used\s+to|previous(?:ly)?|former(?:ly)?|first|old|originally|earlier|back\s+then"
    r"|was|were|had|did)\b"
    r"|예전|전에|원래|처음|첫\s|옛날|이전|(?:었|았|였|했)(?:어|나|니|지|어요|나요|습니까)?\s*\??\s*$",
    _I,
)
_NOW = re.compile(r"\b(?:now|still|current(?:ly)?|these\s+days|nowadays)\b|지금|아직|요즘|이제|현재", _I)


def query_topics(text: str) -> frozenset[str]:
    """The slot families (`residence`, `pet`, ...) whose current value a question asks for; none
    for a question about the past."""
    if _PAST.search(text) and not _NOW.search(text):
        return frozenset()
    return frozenset(topic for topic, pattern in _TOPICS.items() if pattern.search(text))


@dataclass(frozen=True)
class Window:
    """Event-time bounds of a retrieve: `as_of` (what was true then) and `since`..`until`."""

    as_of: datetime | None = None
    since: datetime | None = None
    until: datetime | None = None

    @property
    def latest(self) -> datetime | None:
        """The latest event time a hit may have."""
        bounds = [moment for moment in (self.as_of, self.until) if moment is not None]
        return min(bounds) if bounds else None

    def admits(self, moment: datetime | None) -> bool:
        """Whether something said at `moment` is inside the window (unknown times always are)."""
        return self.period.holds(moment)

    def admits_spoken(self, moment: datetime | None, spoken: Sequence[EventDate]) -> bool:
        """`admits`, or one of the times it speaks of (resolved at write) meets the window."""
        return self.admits(moment) or any(date.meets(self.since, self.latest) for date in spoken)

    @property
    def period(self) -> Period:
        """The event times a hit may have, as the index filters them."""
        return Period(since=self.since, until=self.latest)

    @property
    def bounded(self) -> bool:
        return any(moment is not None for moment in (self.as_of, self.since, self.until))


def wording(memory: Memory, as_of: datetime | None) -> tuple[str, datetime] | None:
    """The memory's text that held at `as_of` (None: now) and when it was stated: a bank fact
    reworded since reads as its earlier wording (`life.revisions`); None when nothing of it was
    stated yet at `as_of`."""
    if as_of is None or memory.stated_at <= as_of:
        return memory.content, memory.stated_at
    for revision in memory.life.revisions:  # oldest first
        stated = revision.valid_from or memory.created_at
        if stated <= as_of < revision.invalid_at:
            return revision.fact, stated
    return None


def replaced_for(memory: Memory, topics: frozenset[str], as_of: datetime | None) -> list[KeyFactLife]:
    """The memory's key facts replaced by `as_of` (None: by now) that the query asks about. A fact
    an extractor named as replaced has no slot: any question asking for a current value asks
    about it."""
    return [
        fact
        for fact in memory.life.replaced_key_facts(as_of)
        if fact.slot.split(":", 1)[0] in topics or (not fact.slot and bool(topics))
    ]


def is_current(memory: Memory, topics: frozenset[str], as_of: datetime | None) -> bool:
    """False when, as of `as_of`, a later statement replaced what the query asks of the memory
    (a bank fact: the fact itself was replaced or retired)."""
    if memory.life.invalid_at is not None and (as_of is None or memory.life.invalid_at <= as_of):
        return False
    return not replaced_for(memory, topics, as_of)


def replacement(memory: Memory, topics: frozenset[str], as_of: datetime | None) -> str | None:
    """The memory that replaced what the query asks of `memory` (the latest, if several did)."""
    if memory.life.invalid_at is not None and (as_of is None or memory.life.invalid_at <= as_of):
        return memory.life.superseded_by
    facts = replaced_for(memory, topics, as_of)
    return max(facts, key=lambda fact: fact.invalid_at).superseded_by if facts else None


def history(memory: Memory, as_of: datetime | None) -> list[FactHistory]:
    """What of the memory stopped holding by `as_of` (None: by now), oldest first: earlier
    wordings of a bank fact, the fact itself once retired, a thread memory's replaced key facts."""
    stated = memory.stated_at
    past = [
        FactHistory(
            fact=revision.fact,
            valid_from=revision.valid_from,
            invalid_at=revision.invalid_at,
            superseded_by=revision.superseded_by,
            reason=revision.reason,
        )
        for revision in memory.life.revisions
        if as_of is None or revision.invalid_at <= as_of
    ]
    life = memory.life
    if life.invalid_at is not None and (as_of is None or life.invalid_at <= as_of):
        past.append(
            FactHistory(
                fact=memory.content,
                valid_from=stated,
                invalid_at=life.invalid_at,
                superseded_by=life.superseded_by,
                reason=life.end_reason or "retire",
            )
        )
    facts = memory.fields.key_facts
    past += [
        FactHistory(
            fact=revision.fact,
            valid_from=revision.valid_from,
            invalid_at=revision.invalid_at,
            reason=revision.reason,
        )
        for revision in memory.life.key_fact_revisions
        if as_of is None or revision.invalid_at <= as_of
    ]
    past += [
        FactHistory(
            fact=facts[fact.index],
            valid_from=stated,
            invalid_at=fact.invalid_at,
            superseded_by=fact.superseded_by,
            reason=fact.reason,
        )
        for fact in memory.life.replaced_key_facts(as_of)
        if fact.index < len(facts)
    ]
    return sorted(past, key=lambda item: item.invalid_at)
