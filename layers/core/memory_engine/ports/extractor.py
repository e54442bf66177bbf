"""The extractor port: one memory's fields from one batch of consecutive turns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from memory_engine.models.domain import MemoryFields, Turn


class ExtractionContext(BaseModel):
    """What an extractor knows beyond the batch: the user's name, language and known characters."""

    user_name: str = "당신"
    language: str = "ko"
    length_limit: int = 1000
    known_characters: dict[str, list[str]] = Field(default_factory=dict)


class Extraction(BaseModel):
    """An extractor's answer: the memory fields plus what it cost (tokens, model, prompt version)."""

    fields: MemoryFields
    metadata: dict[str, str | int | float] = Field(default_factory=dict)


class Extractor(Protocol):
    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        """One memory from one batch of consecutive turns. Raises on failure, never returns empty."""
        ...
