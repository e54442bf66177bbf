"""Bodies of the scoped memory-bank API (docs/api.md §3). Field names are the contract."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    AliasChoices,
    AliasGenerator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from memory_engine.models.api import no_nul
from memory_engine.models.base import Model
from memory_engine.models.domain import Memory
from memory_engine.models.expiry import Expiring
from memory_engine.models.strict import StrictBody
from memory_engine.models.timestamps import rfc3339

MAX_SCOPE_KEYS = 32
MAX_SCOPE_KEY_CHARS = 128
MAX_SCOPE_VALUE_CHARS = 256
MAX_FACT_CHARS = 4_000
MAX_EVENTS = 1_000
MAX_EVENT_TEXT_CHARS = 100_000


def _has_control(text: str) -> bool:
    return any(ord(char) < 0x20 or ord(char) == 0x7F for char in text)


class Sparse(Model):
    """Its fields marked `exclude_if=absent_when_none` are left out when None, so optional parts
    (distance, next_page_token) are absent rather than null, as clients of this API expect. Field
    by field, not by a model serializer, so the OpenAPI document (and the clients generated from
    it) still describes every field."""


def absent_when_none(value: Any) -> bool:
    return value is None


class Body(StrictBody):
    """A memory-bank request body. Its real clients speak Google's REST style, so every field is
    accepted in camelCase too (`similaritySearchParams`, `topK`, `pageToken`); the snake_case
    names stay the documented ones (first in the OpenAPI schema). Any other field is a 422."""

    model_config = ConfigDict(
        alias_generator=AliasGenerator(validation_alias=lambda name: AliasChoices(name, to_camel(name)))
    )


class Scoped(Body):
    scope: dict[str, str] = Field(description="flat dict of string keys and values, matched exactly")

    @field_validator("scope")
    @classmethod
    def _flat_and_bounded(cls, scope: dict[str, str]) -> dict[str, str]:
        if not scope:
            raise ValueError('must name at least one key, e.g. {"user_id": "123"}')
        if len(scope) > MAX_SCOPE_KEYS:
            raise ValueError(f"at most {MAX_SCOPE_KEYS} keys")
        for key, value in scope.items():
            if not key or len(key) > MAX_SCOPE_KEY_CHARS or _has_control(key):
                raise ValueError(f"keys are 1-{MAX_SCOPE_KEY_CHARS} characters without control characters")
            if not value or len(value) > MAX_SCOPE_VALUE_CHARS or _has_control(value):
                raise ValueError(
                    f"values are 1-{MAX_SCOPE_VALUE_CHARS} characters without control characters"
                )
        return scope


class CreateMemoryRequest(Scoped, Expiring):
    fact: str = Field(min_length=1, max_length=MAX_FACT_CHARS)

    @field_validator("fact")
    @classmethod
    def _not_blank(cls, fact: str) -> str:
        if not fact.strip():
            raise ValueError("must not be blank")
        return no_nul(fact)


class BankMemory(Sparse):
    name: str
    fact: str
    scope: dict[str, str]
    createTime: str
    updateTime: str
    # Only for a memory that expires: when it stops existing.
    expireTime: str | None = Field(None, exclude_if=absent_when_none)
    # Additive (event time, docs/api.md "Time"): when the fact was stated; when it stopped holding
    # and what replaced it (absent while it holds).
    validFrom: str | None = Field(None, exclude_if=absent_when_none)
    invalidAt: str | None = Field(None, exclude_if=absent_when_none)
    supersededBy: str | None = Field(None, exclude_if=absent_when_none)

    @classmethod
    def of(cls, memory: Memory) -> BankMemory:
        """A stored memory as the bank shows it; an engine memory's fact is its summary."""
        created = rfc3339(memory.created_at)
        updated = memory.metadata.get("updated_at")
        return cls(
            name=f"memories/{memory.memory_id}",
            fact=memory.content,
            scope=memory.visible_scope,
            createTime=created,
            updateTime=updated if isinstance(updated, str) else created,
            expireTime=None if memory.expires_at is None else rfc3339(memory.expires_at),
            validFrom=rfc3339(memory.stated_at),
            invalidAt=None if memory.life.invalid_at is None else rfc3339(memory.life.invalid_at),
            supersededBy=memory.life.superseded_by,
        )


class PatchMemoryRequest(Body):
    """Correct a fact's wording (`fact`) or retire it (`retire: true`); either way the earlier
    state stays readable as history (GET /v1/memories/{id}/revisions)."""

    fact: str | None = Field(None, min_length=1, max_length=MAX_FACT_CHARS)
    retire: bool = False

    @field_validator("fact")
    @classmethod
    def _not_blank(cls, fact: str | None) -> str | None:
        if fact is not None and not fact.strip():
            raise ValueError("must not be blank")
        return None if fact is None else no_nul(fact)

    @model_validator(mode="after")
    def _one_change(self) -> PatchMemoryRequest:
        if (self.fact is None) == (not self.retire):
            raise ValueError(
                'send either "fact" (the corrected wording) or "retire": true, exactly one of them'
            )
        return self


class FactRevisionView(Sparse):
    """One wording of a fact and the event time it held: from `validFrom` until `invalidAt`
    (absent for the wording that holds now)."""

    fact: str
    validFrom: str | None = Field(None, exclude_if=absent_when_none)
    invalidAt: str | None = Field(None, exclude_if=absent_when_none)
    # Why it stopped holding: update, contradiction, correct or retire.
    reason: str | None = Field(None, exclude_if=absent_when_none)
    supersededBy: str | None = Field(None, exclude_if=absent_when_none)


class KeyFactView(Model):
    """One key fact of a memory extracted from dialogue, with its history: its wordings oldest
    first, the last one as it reads now (`invalidAt` once replaced by a later statement or retired)."""

    index: int
    revisions: list[FactRevisionView]


class ListKeyFactsResponse(Model):
    name: str
    keyFacts: list[KeyFactView]


class ListRevisionsResponse(Model):
    name: str
    # Oldest first; the last is the fact as it reads now (with `invalidAt` once retired).
    revisions: list[FactRevisionView]


class DeleteMemoryResponse(Model):
    name: str
    deleted: bool = True


class SimilaritySearchParams(Body):
    search_query: str = Field(min_length=1, max_length=10_000)
    top_k: int = Field(3, ge=1, le=100)


class SimpleRetrievalParams(Body):
    page_size: int = Field(100, ge=1, le=1_000)
    page_token: str | None = Field(None, max_length=1_000)


class RetrieveMemoriesRequest(Scoped):
    similarity_search_params: SimilaritySearchParams | None = None
    simple_retrieval_params: SimpleRetrievalParams | None = None

    @field_validator("simple_retrieval_params")
    @classmethod
    def _one_mode(
        cls, value: SimpleRetrievalParams | None, info: ValidationInfo
    ) -> SimpleRetrievalParams | None:
        if value is not None and info.data.get("similarity_search_params") is not None:
            raise ValueError("send similarity_search_params or simple_retrieval_params, not both")
        return value


class RetrievedBankMemory(Sparse):
    memory: BankMemory
    # Similarity search only: Euclidean, smaller is closer.
    distance: float | None = Field(None, exclude_if=absent_when_none)


class RetrieveMemoriesResponse(Sparse):
    retrieved_memories: list[RetrievedBankMemory]
    next_page_token: str | None = Field(None, exclude_if=absent_when_none)


class EventPart(Body):
    text: str | None = Field(None, max_length=MAX_EVENT_TEXT_CHARS)


class EventContent(Body):
    role: str = "user"
    parts: list[EventPart] = Field(default_factory=list, max_length=100)


class Event(Body):
    content: EventContent


class DirectContentsSource(Body):
    events: list[Event] = Field(min_length=1, max_length=MAX_EVENTS)

    def user_texts(self) -> list[str]:
        """What the user said, in order: facts are about the user, so other roles are context only."""
        return [
            part.text
            for event in self.events
            if event.content.role == "user"
            for part in event.content.parts
            if part.text and part.text.strip()
        ]


class GenerateMemoriesRequest(Scoped):
    direct_contents_source: DirectContentsSource
    # Additive: the language of the fact prompts (LLM extraction); default MEMORY_ENGINE_FACT_LANGUAGE.
    language: str | None = Field(None, min_length=2, max_length=16)


class GeneratedMemory(Model):
    memory: BankMemory
    action: Literal["CREATED", "UPDATED", "DELETED"]


class GenerateMemoriesResponse(Model):
    generated_memories: list[GeneratedMemory]
