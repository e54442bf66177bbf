"""Generate memories from events: the user's facts, merged with the scope's existing facts."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.models.bank import (
    BankMemory,
    GeneratedMemory,
    GenerateMemoriesRequest,
    GenerateMemoriesResponse,
)
from memory_engine.usecases import facts


def run(engine: Engine, tenant: str, request: GenerateMemoriesRequest) -> GenerateMemoriesResponse:
    """Facts from what the user said in the events, merged into the scope: a fact already there
    is not stored twice (it is kept, or updated when it changed). Synchronous: the answer lists
    what was created, updated and deleted."""
    said = request.direct_contents_source.user_texts()
    language = facts.fact_language(request.language or engine.limits.fact_language, said)
    changes = facts.merge(engine, tenant, request.scope, said, language, {"source": "generate"})
    return GenerateMemoriesResponse(
        generated_memories=[
            GeneratedMemory(memory=BankMemory.of(change.memory), action=change.action) for change in changes
        ]
    )
