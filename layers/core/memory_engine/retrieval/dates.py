"""Dates a question names ("in May 2023", "on 13 October", "2023년 5월"), and whether a turn's date
matches one: retrieval adds a bonus to turns spoken on a date the question asks about.

Only explicit calendar dates: relative ones ("last week") need the asker's own date and are left to
the dense and lexical scores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

__all__ = ["DateMention", "date_match", "named_dates"]

_MONTHS = (
    *("january", "february", "march", "april", "may", "june"),
    *("july", "august", "september", "october", "november", "december"),
)
_MONTH_OF = {name: number for number, name in enumerate(_MONTHS, start=1)}
_MONTH_OF.update({name[:3]: number for name, number in list(_MONTH_OF.items()) if name != "may"})
_MONTH_OF["sept"] = 9
_MONTH_WORD = "|".join(sorted(_MONTH_OF, key=len, reverse=True))

# "13 October 2023", "October 13, 2023", "October 2023", "October": day and year are optional.
_ENGLISH = re.compile(
    rf"\b(?:(?P<day1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?)?(?P<month>{_MONTH_WORD})\.?"
    rf"(?:\s+(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\b)?(?:,?\s+(?P<year>(?:19|20)\d\d))?\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
# "2023년 5월 3일", "5월 3일", "5월", "2023년": each part optional, in that order.
_KOREAN = re.compile(
    r"(?:(?P<year>(?:19|20)\d\d)\s*년\s*)?(?:(?P<month>1[0-2]|0?[1-9])\s*월\s*)(?:(?P<day>[0-3]?\d)\s*일)?"
)
_KOREAN_YEAR = re.compile(r"(?P<year>(?:19|20)\d\d)\s*년")
# Month names that are also verbs: the month only next to a day or year, or capitalised after a
# preposition ("in May", not "May I ask" or "march on").
_AMBIGUOUS = frozenset({"may", "march", "mar"})
_MAY_CONTEXT = re.compile(
    r"\b(?:in|of|on|during|since|until|till|before|after|early|late|mid|last|this|next)\s+$", re.I
)


@dataclass(frozen=True)
class DateMention:
    """A calendar date as far as the question gives it; None parts are not constrained."""

    year: int | None = None
    month: int | None = None
    day: int | None = None


def named_dates(text: str) -> list[DateMention]:
    """The explicit calendar dates in `text`, in order of appearance, repeats dropped."""
    found: list[tuple[int, DateMention]] = []
    covered: list[tuple[int, int]] = []
    for match in _ENGLISH.finditer(text):
        word = match.group("month")
        if word.lower() in _AMBIGUOUS and not _is_month(text, match):
            continue
        day = match.group("day1") or match.group("day2")
        year = match.group("year")
        mention = DateMention(
            year=int(year) if year else None,
            month=_MONTH_OF[word.lower().rstrip(".")],
            day=int(day) if day and 1 <= int(day) <= 31 else None,
        )
        found.append((match.start(), mention))
        covered.append(match.span())
    for match in _KOREAN.finditer(text):
        day = match.group("day")
        year = match.group("year")
        mention = DateMention(
            year=int(year) if year else None,
            month=int(match.group("month")),
            day=int(day) if day and 1 <= int(day) <= 31 else None,
        )
        found.append((match.start(), mention))
        covered.append(match.span())
    for pattern in (_YEAR, _KOREAN_YEAR):
        for match in pattern.finditer(text):
            if not any(start <= match.start() < end for start, end in covered):
                found.append((match.start(), DateMention(year=int(match.group(0)[:4]))))
                covered.append(match.span())
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(mention for _, mention in found))


def date_match(moment: datetime | None, mentions: list[DateMention]) -> float:
    """1 when `moment` falls on a named date (every part it names), 0.5 when only the day differs
    (same month: an event told a few days later), else 0."""
    if moment is None:
        return 0.0
    best = 0.0
    for mention in mentions:
        if mention.year is not None and moment.year != mention.year:
            continue
        if mention.month is not None and moment.month != mention.month:
            continue
        if mention.day is not None and moment.day != mention.day:
            best = max(best, 0.5)
            continue
        return 1.0
    return best


def _is_month(text: str, match: re.Match[str]) -> bool:
    if match.group("day1") or match.group("day2") or match.group("year"):
        return True
    word = match.group("month")
    return word[:1].isupper() and bool(_MAY_CONTEXT.search(text[: match.start()]))
