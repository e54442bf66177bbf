"""The extractor port: one memory's fields from one batch of consecutive turns."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from pydantic import Field

from memory_engine.models.base import Model
from memory_engine.models.domain import MemoryFields, Turn


class CurrentFact(Model):
    """A key fact of an earlier memory of the thread that still holds: what an extractor that
    reads them (`ReadsCurrentFacts`) may mark as updated or contradicted by the batch."""

    id: str  # "<memory id>#<key fact index>"
    fact: str
    stated_at: datetime | None = None


class ExtractionContext(Model):
    """What an extractor knows beyond the batch: the user's name, language and known characters,
    and (for an extractor that reads them) the thread's current facts, newest last."""

    user_name: str = "당신"
    language: str = "ko"
    length_limit: int = 1000
    known_characters: dict[str, list[str]] = Field(default_factory=dict)
    current_facts: list[CurrentFact] = Field(default_factory=list)


class Extraction(Model):
    """An extractor's answer: the memory fields plus what it cost (tokens, model, prompt version)."""

    fields: MemoryFields
    metadata: dict[str, str | int | float] = Field(default_factory=dict)


class Extractor(Protocol):
    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        """One memory from one batch of consecutive turns. Raises on failure, never returns empty."""
        ...


@runtime_checkable
class ReadsCurrentFacts(Protocol):
    """An extractor that is shown the thread's current facts (`ExtractionContext.current_facts`)
    and says which of them the batch updates or contradicts, in its extraction's metadata
    (`replaces_json`: key fact index → [current fact id, "update" | "contradiction"])."""

    def current_facts_wanted(self) -> int:
        """How many of the thread's newest current facts to show it."""
        ...
