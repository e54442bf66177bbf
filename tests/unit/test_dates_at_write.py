"""Issue #45: relative dates in a turn ("yesterday", "지난달", "two days ago", "그저께") are resolved
against that turn's own timestamp when its memory is written, kept as absolute dates on the
memory (`life.event_dates`), and a retrieve with
since/until finds the memory by the resolved date. English and Korean, both store backends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import RetrievedMemory, RetrieveRequest
from memory_engine.retrieval.dates import relative_spans
from memory_engine.usecases import retrieve
from tests.fakes.engine import ENGINE_BACKENDS
from tests.unit.test_thread_fact_life import TENANT, THREAD, say

# Saturday 9 May 2026, 10:00 UTC; the memory is written (and read) weeks later.
SAID = datetime(2026, 5, 9, 10, 0, tzinfo=UTC)


def day(month: int, number: int) -> datetime:
    return datetime(2026, month, number, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "phrase", "start", "end"),
    [
        ("I went hiking yesterday.", "yesterday", day(5, 8), day(5, 9)),
        ("Two days ago I adopted a cat.", "Two days ago", day(5, 7), day(5, 8)),
        ("I start a new job next month.", "next month", day(6, 1), day(7, 1)),
        ("We moved last week.", "last week", day(4, 27), day(5, 4)),
        ("I broke my arm 3 weeks ago.", "3 weeks ago", day(4, 13), day(4, 20)),
        ("어제 북한산에 등산 갔어.", "어제", day(5, 8), day(5, 9)),
        ("그저께 병원에 다녀왔어.", "그저께", day(5, 7), day(5, 8)),
        ("지난달에 부산으로 이사했어.", "지난달", day(4, 1), day(5, 1)),
        ("다음 주에 제주도로 여행 가.", "다음 주", day(5, 11), day(5, 18)),
        ("이틀 전에 고양이를 입양했어.", "이틀 전", day(5, 7), day(5, 8)),
        ("두 달 전에 회사를 그만뒀어.", "두 달 전", day(3, 1), day(4, 1)),
    ],
)
def test_a_relative_date_is_the_span_it_meant_when_said(
    text: str, phrase: str, start: datetime, end: datetime
) -> None:
    [span] = relative_spans(text, SAID)

    assert (span.phrase, span.start, span.end) == (phrase, start, end)


def test_a_duration_is_not_a_date() -> None:
    # "for a month now" and "from two days ago until now" name no day
    assert relative_spans("한 달 전부터 요가를 하고 있어.", SAID) == []


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        engine.extractor = BuiltinExtractor()
        yield engine


def ask(engine: Engine, query: str, **options: object) -> list[RetrievedMemory]:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": [THREAD], "user_input": {"query": query}, "options": options}
    )
    return retrieve.run(engine, TENANT, request).data


CASES = {
    "en": ("I went hiking at Bukhansan yesterday.", "hiking"),
    "ko": ("어제 북한산에 등산 갔어.", "북한산 등산"),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_yesterday_is_written_as_the_day_before_the_turn_and_found_by_that_day(
    engine: Engine, language: str
) -> None:
    # Given a turn said on 9 May saying "yesterday", extracted weeks later
    text, query = CASES[language]
    engine.clock.now = lambda: SAID + timedelta(days=30)  # type: ignore[method-assign]
    memory = say(engine, "s1", text, "Nice!", SAID)
    other = say(engine, "s2", "I went hiking again, this time at Dobongsan." if language == "en"
                else "도봉산에 또 등산 갔어.", "Great!", SAID + timedelta(days=10))  # fmt: skip

    # Then the memory keeps 8 May (not the day it was written, nor the day it is read)
    stored = engine.store.get_memory(TENANT, memory.memory_id)
    assert stored is not None
    [date] = stored.life.event_dates
    assert (date.phrase, date.start, date.end, date.dialog_uuid) == (
        text.split()[0] if language == "ko" else "yesterday",
        day(5, 8),
        day(5, 9),
        "s1-d1",
    )

    # When a retrieve asks for 8 May only (the turn was said on the 9th)
    hits = ask(
        engine, query, since=day(5, 8).isoformat(), until=(day(5, 9) - timedelta(seconds=1)).isoformat()
    )

    # Then the memory is found by the resolved day, and the hike of the 19th is not
    assert [hit.memory_id for hit in hits] == [memory.memory_id]
    assert other.memory_id not in {hit.memory_id for hit in ask(engine, query, until=day(5, 9).isoformat())}


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_memory_hit_carries_the_dates_its_turns_spoke_of(engine: Engine, language: str) -> None:
    # Given a memory of a turn said on 9 May about "yesterday" / "어제"
    text, query = CASES[language]
    memory = say(engine, "s1", text, "Nice!", SAID)

    # When a retrieve finds it
    [hit] = [hit for hit in ask(engine, query) if hit.memory_id == memory.memory_id]

    # Then the hit says which day its turn meant: 8 May, as the memory keeps it
    assert [(d.phrase.lower(), d.start, d.end, d.dialog_uuid) for d in hit.event_dates] == [
        (text.split()[0] if language == "ko" else "yesterday", day(5, 8), day(5, 9), "s1-d1")
    ]
    assert hit.model_dump(mode="json")["event_dates"][0]["start"] == "2026-05-08T00:00:00Z"


def test_a_buffered_turn_is_found_by_the_day_it_speaks_of(engine: Engine) -> None:
    # Given a turn still in the buffer, said on 9 May about "yesterday"
    from memory_engine.models.api import ConsolidateRequest
    from memory_engine.usecases import consolidate

    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s9",
            "parent_session_uuid": THREAD,
            "user_name": "Mina",
            "new_dialog": {
                "uuid": "s9-d1",
                "query": "어제 북한산에 등산 갔어.",
                "answer": "좋았겠다!",
                "timestamp": SAID,
            },
        }
    )
    consolidate.run(engine, TENANT, request)

    # When a retrieve asks for 8 May only / Then the buffered turn is a hit (its dates are
    # resolved when it becomes a memory: none on the hit yet)
    hits = ask(engine, "등산", since=day(5, 8).isoformat(), until=day(5, 8).replace(hour=23).isoformat())
    assert [(hit.source_dialog_uuids, hit.event_dates) for hit in hits] == [(["s9-d1"], [])]


def test_each_turn_of_a_batch_is_read_against_its_own_time() -> None:
    # Given one batch whose turns were said two days apart, both saying "yesterday" / "어제"
    from memory_engine.extraction.event_dates import days_spoken_of, event_dates
    from memory_engine.models.domain import Turn

    def turn(uuid: str, query: str, said: datetime) -> Turn:
        common = {"tenant": TENANT, "session_uuid": "s1", "seq": 0, "answer": "", "created_at": said}
        return Turn(dialog_uuid=uuid, query=query, timestamp=said, **common)

    batch = [
        turn("d1", "I went hiking yesterday.", SAID),
        turn("d2", "어제 영화 봤어.", SAID + timedelta(days=2)),
    ]

    # When the batch's dates are resolved
    dates = event_dates(batch)

    # Then each is the day before its own turn, and the index is given those days
    assert [(date.dialog_uuid, date.start) for date in dates] == [("d1", day(5, 8)), ("d2", day(5, 10))]
    assert days_spoken_of(dates) == [day(5, 8), day(5, 10)]
