"""Relative dates resolved at write: "yesterday" said on 9 May is 8 May for good.

Whatever extracted the batch, each turn's relative expressions ("yesterday", "next month",
"two days ago", "어제", "지난달", "다음 주", "그저께", "이틀 전": `retrieval.dates`) are resolved
against that turn's own timestamp when the memory is written, not against the day someone reads
it. The memory keeps them as `life.event_dates` (what a date-range retrieve finds it by), and a
key fact that repeats such an expression gets the absolute date after it, in the expression's
language ("went hiking yesterday (8 May 2026)", "어제 (2026년 5월 8일)").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from memory_engine.models.domain import MemoryFields, Turn
from memory_engine.models.life import EventDate
from memory_engine.retrieval.dates import relative_spans

__all__ = ["dated", "days_spoken_of", "event_dates", "spoken_span"]

_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def event_dates(batch: Sequence[Turn]) -> list[EventDate]:
    """Every relative expression of the batch's turns, resolved against the turn that said it."""
    return [
        EventDate(phrase=span.phrase, start=span.start, end=span.end, dialog_uuid=turn.dialog_uuid)
        for turn in batch
        for span in relative_spans(turn.text(), turn.timestamp)
    ]


def dated(fields: MemoryFields, batch: Sequence[Turn]) -> tuple[MemoryFields, list[EventDate]]:
    """The fields with each key fact's relative expressions followed by the date they meant, and
    the batch's resolved dates. A key fact's expression is read against the last turn that holds
    it (else the batch's first turn): the turn the fact was drawn from."""
    found = event_dates(batch)
    if not found or not fields.key_facts:
        return fields, found
    facts = [_dated_fact(fact, batch) for fact in fields.key_facts]
    return fields.model_copy(update={"key_facts": facts}), found


def _dated_fact(fact: str, batch: Sequence[Turn]) -> str:
    said_at = batch[0].timestamp
    spans = relative_spans(fact, said_at)
    if not spans:
        return fact
    holding = [turn for turn in batch if spans[0].phrase.lower() in turn.text().lower()]
    if holding:
        spans = relative_spans(fact, holding[-1].timestamp)
    shown = ", ".join(dict.fromkeys(spoken_span(span.phrase, span.start, span.end) for span in spans))
    return f"{fact.rstrip()} ({shown})"


def spoken_span(phrase: str, start: datetime, end: datetime) -> str:
    """The span as people write it, in the phrase's language: a day "8 May 2026" / "2026년 5월 8일",
    a week "week of 11 May 2026" / "2026년 5월 11일 주", a month "April 2026" / "2026년 4월",
    a year "2025" / "2025년"."""
    korean = bool(_HANGUL.search(phrase))
    days = (end - start).days
    if days == 1:
        return f"{start.year}년 {start.month}월 {start.day}일" if korean else f"{start.day} {start:%B %Y}"
    if days == 7:
        return (
            f"{start.year}년 {start.month}월 {start.day}일 주"
            if korean
            else f"week of {start.day} {start:%B %Y}"
        )
    if days <= 31:
        return f"{start.year}년 {start.month}월" if korean else f"{start:%B %Y}"
    return f"{start.year}년" if korean else str(start.year)


def days_spoken_of(dates: Sequence[EventDate], most: int = 62) -> list[datetime]:
    """The first moment of each day the dates cover (a month's every day; a year's month starts),
    at most `most` of them: what the search index filters an event-time range on."""
    days: list[datetime] = []
    for date in dates:
        step = timedelta(days=1) if (date.end - date.start).days <= 31 else None
        moment = date.start
        while moment < date.end:
            days.append(moment)
            if step is not None:
                moment += step
            else:
                moment = moment.replace(year=moment.year + moment.month // 12, month=moment.month % 12 + 1)
    return sorted(set(days))[:most]
