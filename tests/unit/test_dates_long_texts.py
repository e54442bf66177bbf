"""A long turn's dates are read a piece at a time (no regex call holds the interpreter for long)
and with sorted spans (no scan over every earlier match), and come out as a whole-text reading
would: the reference below is that reading, the way `retrieval.dates` did it before."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_engine.retrieval import dates
from memory_engine.retrieval.dates import named_dates, relative_spans

SAID = datetime(2023, 6, 18, 15, 0, tzinfo=UTC)
_MAY_CONTEXT = re.compile(
    r"\b(?:in|of|on|during|since|until|till|before|after|early|late|mid|last|this|next)\s+$", re.I
)


def _reference_relative(text: str) -> list[tuple[int, int, str, int]]:
    found: list[tuple[int, int, str, int]] = []
    covered: list[tuple[int, int]] = []

    def add(match: re.Match[str], unit: str, offset: int) -> None:
        if any(start < match.end() and match.start() < end for start, end in covered):
            return
        covered.append(match.span())
        found.append((*match.span(), unit, offset))

    for match in dates._EN_AGO.finditer(text):
        count = match.group("count").lower()
        add(match, match.group("unit").lower(), -(int(count) if count.isdigit() else dates._EN_COUNT[count]))
    for match in dates._KO_AGO.finditer(text):
        if match.group("days"):
            add(match, "day", -dates._KO_DAYS[match.group("days")])
            continue
        count = match.group("count")
        back = int(count) if count.isdigit() else dates._KO_COUNT[count]
        add(match, dates._KO_UNIT[match.group("unit")], -back)
    for pattern, unit, offset in dates._RELATIVE:
        for match in pattern.finditer(text):
            add(match, unit, offset)
    return sorted(found)


def _reference_named(text: str) -> list[dates.DateMention]:
    found: list[tuple[int, dates.DateMention]] = []
    covered: list[tuple[int, int]] = []
    for match in dates._ENGLISH.finditer(text):
        word = match.group("month")
        if word.lower() in dates._AMBIGUOUS and not (
            match.group("day1")
            or match.group("day2")
            or match.group("year")
            or (word[:1].isupper() and _MAY_CONTEXT.search(text[: match.start()]))
        ):
            continue
        day = match.group("day1") or match.group("day2")
        year = match.group("year")
        found.append(
            (
                match.start(),
                dates.DateMention(
                    year=int(year) if year else None,
                    month=dates._MONTH_OF[word.lower().rstrip(".")],
                    day=int(day) if day and 1 <= int(day) <= 31 else None,
                ),
            )
        )
        covered.append(match.span())
    for match in dates._KOREAN.finditer(text):
        day = match.group("day")
        year = match.group("year")
        mention = dates.DateMention(
            year=int(year) if year else None,
            month=int(match.group("month")),
            day=int(day) if day and 1 <= int(day) <= 31 else None,
        )
        found.append((match.start(), mention))
        covered.append(match.span())
    for pattern in (dates._YEAR, dates._KOREAN_YEAR):
        for match in pattern.finditer(text):
            if not any(start <= match.start() < end for start, end in covered):
                found.append((match.start(), dates.DateMention(year=int(match.group(0)[:4]))))
                covered.append(match.span())
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(mention for _, mention in found))


def _relative(text: str) -> list[tuple[int, int, str, int]]:
    return sorted((*match.span(), unit, offset) for match, unit, offset in dates._relative(text))


_FRAGMENTS = (
    "yesterday", "the day before yesterday", "two days ago", "a couple of weeks ago", "3 months ago",
    "last week", "next month", "this year", "tonight", "어제", "그저께", "지지난주", "지난 주", "이틀 전",
    "이틀 전부터", "두 달 전", "3일 전까지", "다음 달", "올해", "in May", "May I", "march on",
    "13 October 2023", "October 13, 2023", "2023년 5월 3일", "5월", "2019", "1999년", "of  ", "on\n",
    "   ", "\n", " ", "words", "Caroline's", "커피를", "x", "2023",
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=300, max_size=3000))
def test_a_long_text_gives_the_dates_a_whole_text_reading_gives(fragments: list[str]) -> None:
    # Given a text longer than a piece (4,096 characters), dense with dates and near-misses
    text = " ".join(fragments)
    # When its dates are read / Then they are the whole-text reading's, at the same places
    assert _relative(text) == _reference_relative(text)
    assert named_dates(text) == _reference_named(text)
    assert relative_spans(text, SAID) == [
        dates.RelativeSpan(text[start:end].strip(), *dates._span(unit, offset, SAID))
        for start, end, unit, offset in _reference_relative(text)
    ]


def test_an_expression_across_a_piece_end_is_read_whole() -> None:
    # Given "the day before yesterday" starting a few characters before the first piece ends
    text = "x" * (dates._PIECE - 5) + " the day before yesterday " + "y " * 3000
    # When read / Then it is one expression of two days back, not "yesterday"
    assert [(unit, offset) for _, unit, offset in dates._relative(text)] == [("day", -2)]


def test_a_look_ahead_past_a_search_bound_is_checked_against_the_whole_text() -> None:
    # Given "이틀 전부터" (a duration, not a date) whose "전" ends exactly where a bounded search stops
    stop = dates._PIECE + dates._REACH
    text = "가" * (stop - len("이틀 전") - 1) + " 이틀 전부터 " + "나 " * 3000
    assert text.index("부터") == stop
    # When read / Then it is not a date, as in the whole text
    assert dates._relative(text) == []
    assert _reference_relative(text) == []


class _Recording:
    """A compiled pattern that records the stretch each search may read."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.stretches: list[int] = []

    def search(self, text: str, pos: int, endpos: int) -> re.Match[str] | None:
        self.stretches.append(endpos - pos)
        return self.pattern.search(text, pos, endpos)

    def match(self, text: str, pos: int) -> re.Match[str] | None:
        return self.pattern.match(text, pos)

    def finditer(self, text: str) -> object:
        self.stretches.append(len(text))
        return self.pattern.finditer(text)


def test_no_search_of_a_long_text_reads_more_than_a_piece() -> None:
    # Given a 200,000-character turn with one date near its end
    recording = _Recording(dates._RELATIVE[1][0])
    text = "word " * 40_000 + "yesterday"
    # When it is searched
    matches = list(dates._finditer(recording, text))  # type: ignore[arg-type]
    # Then the date is found, and no single search read more than a piece and its reach
    assert [match.group(0) for match in matches] == ["yesterday"]
    assert max(recording.stretches) <= dates._PIECE + dates._REACH
    assert len(recording.stretches) >= len(text) // dates._PIECE


def test_covered_spans_merge_and_answer_overlaps_and_positions() -> None:
    covered = dates._Covered()
    covered.add(10, 20)
    covered.add(30, 40)
    covered.add(15, 32)  # overlaps both: one span 10-40
    covered.add(50, 55)
    assert covered.overlaps(39, 45) and not covered.overlaps(40, 50)
    assert covered.holds(10) and covered.holds(54) and not covered.holds(9) and not covered.holds(55)
    assert not covered.overlaps(0, 10) and covered.overlaps(0, 11)
