"""Dates a question names ("in May 2023", "on 13 October", "2023년 5월"), and whether a turn's date
matches one: retrieval adds a bonus to turns spoken on a date the question asks about.

Relative dates ("어제", "지난주", "last month", "two days ago", "이틀 전") are calendar dates once
the speaker's date is known: `relative_dates` turns them into the days or month they mean (a
question's), `relative_spans` into the stretch of time each covers (a turn's, resolved at write).
Calendar units are UTC's, as the turns' timestamps are.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["DateMention", "RelativeSpan", "date_match", "named_dates", "relative_dates", "relative_spans"]

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
_MAY_CONTEXT_WORD = re.compile(
    r"\b(?:in|of|on|during|since|until|till|before|after|early|late|mid|last|this|next)$", re.I
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
    covered = _Covered()
    for match in _finditer(_ENGLISH, text):
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
        covered.add(*match.span())
    for match in _finditer(_KOREAN, text):
        day = match.group("day")
        year = match.group("year")
        mention = DateMention(
            year=int(year) if year else None,
            month=int(match.group("month")),
            day=int(day) if day and 1 <= int(day) <= 31 else None,
        )
        found.append((match.start(), mention))
        covered.add(*match.span())
    for pattern in (_YEAR, _KOREAN_YEAR):
        for match in _finditer(pattern, text):
            if not covered.holds(match.start()):
                found.append((match.start(), DateMention(year=int(match.group(0)[:4]))))
                covered.add(*match.span())
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
    if not word[:1].isupper():
        return False
    # The preposition read where it can be (just before the whitespace before the word),
    # not over the whole text before it: a long text of many "May"s is not read once per "May".
    end = match.start()
    while end and text[end - 1].isspace():
        end -= 1
    return end < match.start() and bool(_MAY_CONTEXT_WORD.search(text, max(0, end - 16), end))


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

# A count of units back: "two days ago", "3 weeks ago", "a month ago"; "이틀 전", "3일 전", "두 달 전".
_EN_COUNT = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3,
}  # fmt: skip
_EN_AGO = re.compile(
    rf"\b(?P<count>\d{{1,3}}|{'|'.join(sorted(_EN_COUNT, key=len, reverse=True))})\s+"
    r"(?P<unit>day|week|month|year)s?\s+ago\b",
    re.IGNORECASE,
)
# Native Korean day counts stand alone ("이틀 전"); other counts take a unit ("3일 전", "두 달 전").
# "한 달 전부터" (for a month now) is a duration, not a date.
_KO_DAYS = {"하루": 1, "이틀": 2, "사흘": 3, "나흘": 4, "닷새": 5, "엿새": 6, "이레": 7, "열흘": 10}
_KO_COUNT = {
    "한": 1,
    "두": 2,
    "세": 3,
    "네": 4,
    "다섯": 5,
    "여섯": 6,
    "일곱": 7,
    "여덟": 8,
    "아홉": 9,
    "열": 10,
}
_KO_UNIT = {
    "일": "day",
    "주": "week",
    "주일": "week",
    "달": "month",
    "개월": "month",
    "년": "year",
    "해": "year",
}
_KO_COUNTS = "|".join(sorted(_KO_COUNT, key=len, reverse=True))
_KO_AGO = re.compile(
    rf"(?:(?P<days>{'|'.join(_KO_DAYS)})|(?P<count>\d{{1,3}}|{_KO_COUNTS})"
    r"\s*(?P<unit>주일|개월|일|주|달|년|해))\s*전(?!부터|까지)"
)


@dataclass(frozen=True)
class RelativeSpan:
    """A relative expression of a text and the stretch of time it means: [start, end) in UTC."""

    phrase: str
    start: datetime
    end: datetime


def _relative(text: str) -> list[tuple[re.Match[str], str, int]]:
    """Each relative expression of `text` with its unit and offset, in order of appearance; a
    longer one hides the shorter ones inside it."""
    found: list[tuple[re.Match[str], str, int]] = []
    covered = _Covered()

    def add(match: re.Match[str], unit: str, offset: int) -> None:
        if covered.overlaps(*match.span()):
            return
        covered.add(*match.span())
        found.append((match, unit, offset))

    for match in _finditer(_EN_AGO, text):
        count = match.group("count").lower()
        add(match, match.group("unit").lower(), -(int(count) if count.isdigit() else _EN_COUNT[count]))
    for match in _finditer(_KO_AGO, text):
        if match.group("days"):
            add(match, "day", -_KO_DAYS[match.group("days")])
            continue
        count = match.group("count")
        add(match, _KO_UNIT[match.group("unit")], -(int(count) if count.isdigit() else _KO_COUNT[count]))
    for pattern, unit, offset in _RELATIVE:
        for match in _finditer(pattern, text):
            add(match, unit, offset)
    found.sort(key=lambda item: item[0].start())
    return found


def relative_dates(text: str, now: datetime) -> list[DateMention]:
    """The dates that relative expressions in `text` mean when said at `now` ("어제" → yesterday,
    "지난주" → each day of last week, "다음 달" → next month, "이틀 전" → two days before), in
    order of appearance."""
    found = [_resolve(unit, offset, now) for _, unit, offset in _relative(text)]
    return list(dict.fromkeys(mention for mentions in found for mention in mentions))


def relative_spans(text: str, said_at: datetime) -> list[RelativeSpan]:
    """The stretch of time each relative expression of `text` means when said at `said_at`
    ("yesterday" said on 9 May: 8 May; "지난달": April; "next week": its Monday to Sunday)."""
    return [
        RelativeSpan(match.group(0).strip(), *_span(unit, offset, said_at))
        for match, unit, offset in _relative(text)
    ]


def _span(unit: str, offset: int, now: datetime) -> tuple[datetime, datetime]:
    moment = now.astimezone(UTC) if now.tzinfo is not None else now.replace(tzinfo=UTC)
    day = datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    if unit == "day":
        start = day + timedelta(days=offset)
        return start, start + timedelta(days=1)
    if unit == "week":
        start = day - timedelta(days=day.weekday()) + timedelta(weeks=offset)
        return start, start + timedelta(weeks=1)
    if unit == "month":
        index = day.year * 12 + day.month - 1 + offset
        start = datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)
        following = index + 1
        return start, datetime(following // 12, following % 12 + 1, 1, tzinfo=UTC)
    return datetime(day.year + offset, 1, 1, tzinfo=UTC), datetime(day.year + offset + 1, 1, 1, tzinfo=UTC)


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


# A long turn (the API takes 100,000 characters a side) is searched a piece at a time, so that no
# single regex call holds the interpreter for long: one `finditer` step over a long text with few
# dates scans to the next match in one call (40-180 ms measured on 200,000 characters).
_PIECE = 4096
_REACH = 256  # longer than any date expression: a match is read whole past its piece's end


def _finditer(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)`, each search bounded to `_PIECE` + `_REACH` characters. Every match
    is taken again from the whole text at its start, so a piece's end can neither cut a match short
    nor satisfy a look-ahead the text does not; the matches are finditer's for every expression
    shorter than `_REACH`."""
    size = len(text)
    if size <= _PIECE + _REACH:
        yield from pattern.finditer(text)
        return
    position = 0
    while position < size:
        stop = min(size, position + _PIECE)
        seen = pattern.search(text, position, min(size, stop + _REACH))
        if seen is None or seen.start() >= stop:
            position = stop
            continue
        match = pattern.match(text, seen.start())
        if match is None:
            position = seen.start() + 1
            continue
        yield match
        position = max(match.end(), match.start() + 1)


class _Covered:
    """The union of the spans a text's longer expressions took, as sorted disjoint [start, end):
    each question is two bisections, not a scan over every earlier match (quadratic over a long
    text of many dates)."""

    __slots__ = ("_ends", "_starts")

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        """Whether [start, end) shares a position with a span taken."""
        first = bisect_right(self._ends, start)  # the first span ending after `start`
        return first < len(self._starts) and self._starts[first] < end

    def holds(self, position: int) -> bool:
        return self.overlaps(position, position + 1)

    def add(self, start: int, end: int) -> None:
        first = bisect_right(self._ends, start)
        last = bisect_left(self._starts, end)  # spans first..last-1 overlap [start, end)
        if first < last:
            start, end = min(start, self._starts[first]), max(end, self._ends[last - 1])
        self._starts[first:last] = [start]
        self._ends[first:last] = [end]
