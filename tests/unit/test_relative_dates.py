"""Relative dates ("어제", "지난주", "last month") are the dates they mean on the day of asking,
and a turn said on such a date gets the date match."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.retrieval.dates import DateMention, named_dates, relative_dates
from memory_engine.usecases import consolidate, retrieve
from tests.fakes.engine import fake_engine

SUNDAY = datetime(2023, 6, 18, 15, 0, tzinfo=UTC)
TENANT = "tenant-a"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("어제 뭐 먹었어?", [DateMention(2023, 6, 17)]),
        ("그저께 누구 만났지?", [DateMention(2023, 6, 16)]),
        ("오늘 기분 어때?", [DateMention(2023, 6, 18)]),
        ("지난달에 어디 갔었지?", [DateMention(2023, 5)]),
        ("다음 달 계획이 뭐야?", [DateMention(2023, 7)]),
        ("작년에 이사했어?", [DateMention(2022)]),
        ("What did I eat yesterday?", [DateMention(2023, 6, 17)]),
        ("Where did we go last month?", [DateMention(2023, 5)]),
    ],
)
def test_a_relative_date_is_the_day_month_or_year_it_means(
    question: str, expected: list[DateMention]
) -> None:
    assert relative_dates(question, SUNDAY) == expected


def test_last_week_is_its_seven_days_monday_first_and_the_week_before_is_not_read_twice() -> None:
    last_week = relative_dates("지난주에 뭐 했어?", SUNDAY)
    before = relative_dates("지지난주 토요일", SUNDAY)

    assert last_week == [DateMention(2023, 6, day) for day in range(5, 12)]
    assert before == [DateMention(2023, 5, 29), DateMention(2023, 5, 30), DateMention(2023, 5, 31)] + [
        DateMention(2023, 6, day) for day in range(1, 5)
    ]


def test_a_korean_calendar_date_is_still_read_as_before() -> None:
    assert named_dates("2023년 5월 3일에 뭐 샀지?") == [DateMention(2023, 5, 3)]
    assert relative_dates("2023년 5월 3일에 뭐 샀지?", SUNDAY) == []


def test_a_turn_said_yesterday_gets_the_date_match_of_a_question_about_yesterday() -> None:
    # Given two buffered turns, one said the day before the question is asked, one a month before
    engine = fake_engine()
    now = engine.clock.now()
    yesterday, a_month_ago = now.replace(day=now.day - 1), now.replace(month=now.month - 1)
    lines = [(1, "점심에 김치찌개를 먹었어", yesterday), (2, "점심에 된장찌개를 먹었어", a_month_ago)]
    for n, text, said in lines:
        when = said.isoformat()
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": f"d{n}", "query": text, "answer": "좋았겠다", "timestamp": when},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))

    # When the question names yesterday
    question = {"parent_session_uuids": ["thread-1"], "user_input": {"query": "어제 점심에 뭐 먹었지?"}}
    gathered = retrieve.gather(engine, TENANT, RetrieveRequest.model_validate(question))

    # Then only yesterday's turn carries the date match
    dates = {turn.owner: turn.features["date"] for turn in gathered.turns}
    assert dates == {"turn:s1:d1": 1.0, "turn:s1:d2": 0.0}
