"""Dates a question names, and whether a turn's date matches one."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_engine.retrieval.dates import DateMention, date_match, named_dates


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When did Melanie go camping in July?", [DateMention(month=7)]),
        ("What did she show on October 13, 2023?", [DateMention(2023, 10, 13)]),
        ("What did Gina find on 1 February, 2023?", [DateMention(2023, 2, 1)]),
        ("What happened on the 3rd of Sept. 2022?", [DateMention(2022, 9, 3)]),
        ("How many times did she go to the beach in 2023?", [DateMention(year=2023)]),
        ("What did they plan in Dec 2023 and in January?", [DateMention(2023, 12), DateMention(month=1)]),
        ("2023년 5월 3일에 뭐 했어?", [DateMention(2023, 5, 3)]),
        ("5월에 어디 갔었지?", [DateMention(month=5)]),
        ("2022년에 읽은 책은?", [DateMention(year=2022)]),
    ],
)
def test_explicit_calendar_dates_are_found(question: str, expected: list[DateMention]) -> None:
    assert named_dates(question) == expected


@pytest.mark.parametrize(
    "question",
    ["May I ask what you cooked?", "Did the band march on the street?", "What did we talk about last week?"],
)
def test_month_words_used_as_verbs_and_relative_dates_are_not_dates(question: str) -> None:
    assert named_dates(question) == []


@pytest.mark.parametrize(
    ("question", "expected"),
    [("What did she do in May?", [DateMention(month=5)]), ("Who came on May 3?", [DateMention(None, 5, 3)])],
)
def test_may_is_the_month_after_a_preposition_or_next_to_a_day(
    question: str, expected: list[DateMention]
) -> None:
    assert named_dates(question) == expected


def test_a_date_matches_every_part_the_question_names() -> None:
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)

    assert date_match(said, [DateMention(2023, 5, 8)]) == 1.0
    assert date_match(said, [DateMention(month=5)]) == 1.0
    assert date_match(said, [DateMention(year=2023)]) == 1.0
    # Same month, another day: an event is often told a few days after it happened
    assert date_match(said, [DateMention(2023, 5, 20)]) == 0.5
    assert date_match(said, [DateMention(2022, 5, 8)]) == 0.0
    assert date_match(said, [DateMention(month=6), DateMention(month=5)]) == 1.0


def test_no_date_or_no_mention_never_matches() -> None:
    assert date_match(None, [DateMention(month=5)]) == 0.0
    assert date_match(datetime(2023, 5, 8, tzinfo=UTC), []) == 0.0
