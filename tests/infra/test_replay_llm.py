"""The replay's fake LLM (tests/infra/replay/llm.py) on its own: its answers must survive what the
LLM extractor does to a real model's (schema, grounding, fact mapping), or the LLM variants'
replay never reaches the paths that need a key fact or two facts of one user."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from memory_engine.adapters.openai.llm_extractor import map_fact_operations, speakers
from memory_engine.extraction.grounding import ground
from memory_engine.extraction.prompts.render import facts_messages, memory_messages
from memory_engine.extraction.registry import update_registry
from memory_engine.extraction.schema import (
    FactOperationsOut,
    MemoryOut,
    strict_json_schema,
    to_memory_fields,
)
from memory_engine.models.domain import Turn
from memory_engine.ports import ExtractionContext
from tests.infra.replay.llm import answer

MARCH = datetime(2026, 3, 1, 9, tzinfo=UTC)


def _asked(messages: list[dict[str, str]], schema: dict[str, Any]) -> str:
    shape = {"type": "json_schema", "json_schema": {"schema": schema}}
    request = {"messages": messages, "response_format": shape}
    content: str = answer(request)["choices"][0]["message"]["content"]
    return content


def _turn(number: int, query: str, reply: str) -> Turn:
    return Turn(
        tenant="t",
        session_uuid="s",
        dialog_uuid=f"d{number}",
        seq=number,
        query=query,
        answer=reply,
        user_name="Mina",
        timestamp=MARCH,
        created_at=MARCH,
    )


def test_a_memorys_key_facts_are_its_speakers_lines_and_grounding_keeps_them() -> None:
    # Given a batch of two turns, one with a quote mark in it, as the extractor renders it
    turns = [_turn(1, 'I live in "Busan".', "Busan is lovely."), _turn(2, "제 강아지 이름은 후추예요.", "")]
    context = ExtractionContext(user_name="Mina", language="en")
    schema = strict_json_schema(MemoryOut)
    messages, _ = memory_messages(turns, context, schema)

    # When the fake model answers, and the answer goes through the extractor's checks
    out = MemoryOut.model_validate_json(_asked(messages, schema))
    fields, characters = to_memory_fields(out, {}, len(turns), speakers(turns))
    grounded, _ = ground(fields, turns, context, update_registry({}, characters), named_none=False)

    # Then each turn's user line is a key fact that replaces nothing, and grounding keeps both
    assert grounded.key_facts[:2] == ['Mina: I live in "Busan".', "Mina: 제 강아지 이름은 후추예요."]
    assert all(fact.status == "new" and fact.replaces is None for fact in out.key_facts)


def test_each_exchange_gives_its_own_fact_the_last_message_it_was_sent() -> None:
    # Given two exchanges of one user, the second saying something else
    schema = strict_json_schema(FactOperationsOut)
    found = []
    for said in (["Hello!", "My dog is called Pepper."], ["I live in Busan."]):
        messages, _ = facts_messages(said, [], "en", schema)
        # When the fake model answers each
        out = FactOperationsOut.model_validate(json.loads(_asked(messages, schema)))
        found += [(operation.op, operation.fact) for operation in map_fact_operations(out, [])]

    # Then the user holds two distinct facts, each a message they sent
    assert found == [("add", "My dog is called Pepper."), ("add", "I live in Busan.")]
