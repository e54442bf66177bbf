"""A fact's life: when it was stated, and when and by what a later statement replaced it.

Event time, not ingest time: `valid_from` is the time of the turn that stated the fact (a bank
fact's: when it was said, else when it was created). A replaced fact is never deleted: it keeps
its text with `invalid_at` (the replacing statement's event time) and `superseded_by` (the id of
the memory, or bank fact, that replaced it), so a retrieve can put the current value first, answer
`as_of` a past moment, and show the history on request.

Every field is optional with a default: records written before facts had a life read as facts that
still hold, stated when they were created.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field

from memory_engine.models.base import Model

# Why a fact stopped holding: a later statement of the same slot replaced it ("update"), a model
# read a later statement as contradicting it ("contradiction"), a caller corrected its text
# ("correct") or retired it ("retire").
EndReason = Literal["update", "contradiction", "correct", "retire"]


class KeyFactLife(Model):
    """One key fact of a thread memory (`fields.key_facts[index]`) that a later statement replaced.

    Only replaced key facts are listed: one absent from `MemoryLife.key_facts` still holds."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    # The one-value-at-a-time fact it states (`extraction.fact_slots`: "residence", "pet", ...).
    slot: str
    # Whose fact it is: the character the key fact is about (its speaker for "I ..." statements).
    subject: str = ""
    invalid_at: datetime
    # The memory whose statement replaced it; None when a caller retired it (`reason` "retire").
    superseded_by: str | None = None
    reason: EndReason = "update"


class KeyFactRevision(Model):
    """An earlier wording of a thread memory's key fact (`fields.key_facts[index]`), corrected
    through the API: it read `fact` from `valid_from` until `invalid_at`."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    fact: str
    valid_from: datetime | None = None
    invalid_at: datetime
    reason: EndReason = "correct"


class FactRevision(Model):
    """An earlier wording of a bank fact, as it read from `valid_from` until `invalid_at`."""

    model_config = ConfigDict(frozen=True)

    fact: str
    valid_from: datetime | None = None
    invalid_at: datetime
    reason: EndReason = "update"
    # The fact or memory whose statement ended it, when one did (not for a caller's correction).
    superseded_by: str | None = None


class EventDate(Model):
    """A time a turn spoke of in relative words ("yesterday", "지난달", "two days ago"), resolved
    at write against that turn's own timestamp: [start, end) in UTC, a day, week, month or year."""

    model_config = ConfigDict(frozen=True)

    phrase: str
    start: datetime
    end: datetime
    dialog_uuid: str  # the turn that said it

    def meets(self, since: datetime | None, until: datetime | None) -> bool:
        """Whether the span overlaps the (inclusive, open-ended) range."""
        return (until is None or self.start <= until) and (since is None or self.end > since)


class MemoryLife(Model):
    """The life of a memory (a thread memory's key facts) or of a bank fact (the memory itself)."""

    model_config = ConfigDict(frozen=True)

    # Event time it was stated: a thread memory's first turn's timestamp; a bank fact's event time.
    valid_from: datetime | None = None
    # A bank fact: when it stopped holding (retired, or replaced by `superseded_by`); None: holds.
    invalid_at: datetime | None = None
    superseded_by: str | None = None
    end_reason: EndReason | None = None
    # A thread memory: its key facts that later statements replaced (or a caller retired).
    key_facts: list[KeyFactLife] = Field(default_factory=list)
    # A thread memory: earlier wordings of its key facts, corrected through the API, oldest first.
    key_fact_revisions: list[KeyFactRevision] = Field(default_factory=list)
    # A bank fact: its earlier wordings, oldest first (a PATCH or an update keeps the old one here).
    revisions: list[FactRevision] = Field(default_factory=list)
    # A thread memory: the times its turns spoke of in relative words, resolved at write
    # (`extraction.event_dates`); a date-range retrieve finds the memory by them too.
    event_dates: list[EventDate] = Field(default_factory=list)

    def still_holds(self, moment: datetime | None = None) -> bool:
        """Whether the memory (as a whole: a bank fact) was not yet retired at `moment` (None: now)."""
        return self.invalid_at is None or (moment is not None and moment < self.invalid_at)

    def replaced_key_facts(self, moment: datetime | None = None) -> list[KeyFactLife]:
        """The key facts replaced by `moment` (None: by now)."""
        return [fact for fact in self.key_facts if moment is None or fact.invalid_at <= moment]
