"""LlmExtractor.extract_facts: numbered existing facts in the prompt, real ids in the answer."""

from __future__ import annotations

import json
from collections.abc import Callable

from memory_engine.adapters.openai import LlmExtractor
from memory_engine.extraction.fact_extractor import FactOperation
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion
from tests.llm.builders import prompt_text

EXISTING = [("mem-a1", "The user lives in Seoul."), ("mem-b2", "The user has a cat named Nabi.")]


def answer(*operations: dict[str, object]) -> str:
    return json.dumps({"operations": list(operations)})


def test_existing_ids_are_shown_as_small_numbers_and_mapped_back(
    server: FakeOpenAIServer, make_extractor: Callable[..., LlmExtractor]
) -> None:
    # Given a model that updates fact 0, keeps fact 1 (as a bare number) and adds one
    server.script(
        (
            200,
            chat_completion(
                answer(
                    {"op": "update", "id": "0", "fact": "The user moved to Busan."},
                    {"op": "keep", "id": 1, "fact": ""},
                    {"op": "add", "id": None, "fact": "The user is learning to surf."},
                )
            ),
        )
    )
    # When facts are extracted
    operations = (
        make_extractor()
        .extract_facts(["I moved to Busan and I'm learning to surf!"], EXISTING, "en")
        .operations
    )
    # Then the prompt showed numbers, never the ids, and the operations name the real ids
    text = prompt_text(server.requests[0])
    assert '0: "The user lives in Seoul."' in text and "mem-a1" not in text
    assert server.requests[0]["response_format"]["json_schema"]["name"] == "fact_operations"
    assert operations == [
        FactOperation(op="update", id="mem-a1", fact="The user moved to Busan."),
        FactOperation(op="keep", id="mem-b2", fact="The user has a cat named Nabi."),
        FactOperation(op="add", id=None, fact="The user is learning to surf."),
    ]


def test_operations_naming_invented_numbers_are_dropped(
    server: FakeOpenAIServer, make_extractor: Callable[..., LlmExtractor]
) -> None:
    # Given a model that names facts 7 and "mem-a1", which were never shown as numbers
    server.script(
        (
            200,
            chat_completion(
                answer(
                    {"op": "delete", "id": "7", "fact": ""},
                    {"op": "update", "id": "mem-a1", "fact": "The user lives in Jeju."},
                    {"op": "delete", "id": "1", "fact": ""},
                )
            ),
        )
    )
    # When facts are extracted
    operations = make_extractor().extract_facts(["Sadly Nabi ran away."], EXISTING, "en").operations
    # Then only the operation on a shown number survives
    assert operations == [FactOperation(op="delete", id="mem-b2", fact="The user has a cat named Nabi.")]


def test_an_add_that_repeats_an_existing_fact_becomes_keep(
    server: FakeOpenAIServer, make_extractor: Callable[..., LlmExtractor]
) -> None:
    # Given a model that "adds" a fact already stored (other case and punctuation) twice
    server.script(
        (
            200,
            chat_completion(
                answer(
                    {"op": "add", "id": None, "fact": "the user lives in seoul"},
                    {"op": "add", "id": None, "fact": "The user lives in Seoul!"},
                )
            ),
        )
    )
    # When facts are extracted
    operations = make_extractor().extract_facts(["I live in Seoul."], EXISTING, "en").operations
    # Then the stored fact is kept once, not duplicated
    assert operations == [FactOperation(op="keep", id="mem-a1", fact="The user lives in Seoul.")]


def test_no_messages_means_no_call(
    server: FakeOpenAIServer, make_extractor: Callable[..., LlmExtractor]
) -> None:
    # Given only blank messages
    # When facts are extracted
    operations = make_extractor().extract_facts(["  "], EXISTING).operations
    # Then nothing is asked and nothing changes
    assert operations == [] and server.requests == []
