"""Parsing and repair against real model output: every batch recorded by `bench.quality.llm_extraction
--record` (tests/llm/recorded/) replayed through the fake server, answer for answer."""

from __future__ import annotations

from collections.abc import Callable

import pytest

pytest.importorskip("openai")

from memory_engine.adapters.openai import LlmExtractor
from memory_engine.adapters.openai.client import RetryPolicy
from memory_engine.adapters.openai.llm_extractor import speakers
from memory_engine.adapters.openai.modes import refuses_mode
from memory_engine.extraction.grounding import ground
from memory_engine.extraction.registry import update_registry
from memory_engine.extraction.schema import MemoryOut, to_memory_fields
from tests.fakes.openai_server import FakeOpenAIServer
from tests.llm.recorded import Recording, recording, recordings

Make = Callable[..., LlmExtractor]


def _replay(server: FakeOpenAIServer, recorded: Recording) -> None:
    """The server answers as the real one did: its refusals of a mode every time, its answers in order."""
    for exchange in recorded.exchanges:
        body = exchange["body"]
        message = body.get("error", {}).get("message", "") if isinstance(body, dict) else str(body)
        if exchange["status"] >= 400 and refuses_mode(exchange["status"], message, body):
            server.refuse_mode(exchange["mode"], exchange["status"], body)
        else:
            server.script((exchange["status"], body))


@pytest.mark.parametrize("name", recordings())
def test_a_recorded_batch_gets_its_memory_in_no_more_answers_than_the_model_gave(
    name: str, server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given the server's recorded responses to one batch, from its first mode on
    recorded = recording(name)
    _replay(server, recorded)
    extractor = make_extractor(
        structured_output=recorded.exchanges[0]["mode"], retry=RetryPolicy(transport_attempts=1)
    )
    answers = recorded.answers()
    # When the batch is extracted again
    extraction = extractor.extract(recorded.turns, recorded.context)
    # Then it succeeds within the answers the model gave (a later, more tolerant parser may need
    # fewer), and the memory is the one the last of them holds
    used = len(answers) - server.pending
    assert 1 <= used <= len(answers)
    content = answers[used - 1]["choices"][0]["message"]["content"]
    out = MemoryOut.model_validate_json(content)
    fields, characters = to_memory_fields(
        out, recorded.context.known_characters, len(recorded.turns), speakers(recorded.turns)
    )
    # ... checked against the turns as every answer is (`extraction.grounding`)
    registry = update_registry(recorded.context.known_characters, characters)
    named_none = not any(character.name or character.aliases for character in out.characters)
    expected, _ = ground(fields, recorded.turns, recorded.context, registry, named_none)
    assert extraction.fields == expected
