"""Relative dates resolved at write: "yesterday" said on 9 May is 8 May for good.

Whatever extracted the batch, each turn's relative expressions ("yesterday", "next month",
"two days ago", "어제", "지난달", "다음 주", "그저께", "이틀 전": `retrieval.dates`) are resolved
against that turn's own timestamp when the memory is written, not against the day someone reads
it. The memory keeps them as `life.event_dates` (what a date-range retrieve finds it by, through
the days its documents speak of). The key facts' wording is left as extracted: the absolute date
written after each cost LoCoMo dev R@5 0.643 -> 0.634 (two conversations, e5), the date words
diluting what the memory's vector and BM25 text say.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from memory_engine.models.domain import Turn
from memory_engine.models.life import EventDate
from memory_engine.retrieval.dates import relative_spans

__all__ = ["days_spoken_of", "event_dates"]


def event_dates(batch: Sequence[Turn]) -> list[EventDate]:
    """Every relative expression of the batch's turns, resolved against the turn that said it."""
    return [
        EventDate(phrase=span.phrase, start=span.start, end=span.end, dialog_uuid=turn.dialog_uuid)
        for turn in batch
        for span in relative_spans(turn.text(), turn.timestamp)
    ]


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
