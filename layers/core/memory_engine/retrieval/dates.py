"""Dates a question names ("in May 2023", "on 13 October", "2023년 5월"), and whether a turn's date
matches one: retrieval adds a bonus to turns spoken on a date the question asks about.

Relative dates ("어제", "지난주", "last month") are calendar dates once the asker's date is known:
`relative_dates` turns them into the days or month they mean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = ["DateMention", "date_match", "named_dates", "relative_dates"]

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


# Relative dates, Korean and English: (pattern, unit, offset). A day is a day; a week is its
# seven days (Monday first); a month is the month; a year is the year.
_RELATIVE: tuple[tuple[re.Pattern[str], str, int], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), unit, offset)
    for pattern, unit, offset in (
        (r"엊그제|그저께|그제|\bthe day before yesterday\b", "day", -2),
        (r"어제|\byesterday\b", "day", -1),
        (r"오늘|\btoday\b|\btonight\b", "day", 0),
        (r"내일|\btomorrow\b", "day", 1),
        (r"모레", "day", 2),
        (r"지지난\s?주", "week", -2),
        (r"지난\s?주|저번\s?주|\blast week\b", "week", -1),
        (r"이번\s?주|\bthis week\b", "week", 0),
        (r"다음\s?주|\bnext week\b", "week", 1),
        (r"지난\s?달|저번\s?달|\blast month\b", "month", -1),
        (r"이번\s?달|\bthis month\b", "month", 0),
        (r"다음\s?달|\bnext month\b", "month", 1),
        (r"작년|지난\s?해|\blast year\b", "year", -1),
        (r"올해|금년|\bthis year\b", "year", 0),
        (r"내년|다음\s?해|\bnext year\b", "year", 1),
    )
)
# "지지난주" contains "지난주": the longer pattern comes first, and what it covers is not read again.


def relative_dates(text: str, now: datetime) -> list[DateMention]:
    """The dates that relative expressions in `text` mean when said at `now` ("어제" → yesterday,
    "지난주" → each day of last week, "다음 달" → next month), in order of appearance."""
    found: list[tuple[int, list[DateMention]]] = []
    covered: list[tuple[int, int]] = []
    for pattern, unit, offset in _RELATIVE:
        for match in pattern.finditer(text):
            if any(start < match.end() and match.start() < end for start, end in covered):
                continue
            covered.append(match.span())
            found.append((match.start(), _resolve(unit, offset, now)))
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(mention for _, mentions in found for mention in mentions))


def _resolve(unit: str, offset: int, now: datetime) -> list[DateMention]:
    if unit == "day":
        day = now + timedelta(days=offset)
        return [DateMention(day.year, day.month, day.day)]
    if unit == "week":
        monday = now - timedelta(days=now.weekday()) + timedelta(weeks=offset)
        days = (monday + timedelta(days=i) for i in range(7))
        return [DateMention(day.year, day.month, day.day) for day in days]
    if unit == "month":
        index = now.year * 12 + now.month - 1 + offset
        return [DateMention(index // 12, index % 12 + 1)]
    return [DateMention(now.year + offset)]
