"""The thread's character registry, alone and across two extracted batches."""

from __future__ import annotations

import json
from collections.abc import Callable

from memory_engine.adapters.openai import LlmExtractor
from memory_engine.extraction.registry import update_registry
from memory_engine.ports import ExtractionContext
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion
from tests.llm.builders import as_content, memory_answer, prompt_text, turns


def test_a_new_character_becomes_a_new_entry() -> None:
    # Given an empty registry
    # When a batch names a character with aliases
    registry = update_registry({}, {"김민수": ["민수", "민수 씨"]})
    # Then the character is registered under that name
    assert registry == {"김민수": ["민수", "민수 씨"]}


def test_an_alias_of_a_known_character_joins_it_under_the_known_name() -> None:
    # Given a registry that knows Caroline as Caro
    registry = {"Caroline": ["Caro"]}
    # When a batch calls her "caro" with a new nickname
    updated = update_registry(registry, {"caro": ["Carrie"]})
    # Then the new nickname joins Caroline and the input is not modified
    assert updated == {"Caroline": ["Caro", "Carrie"]}
    assert registry == {"Caroline": ["Caro"]}


def test_overlapping_alias_sets_merge_into_the_oldest_entry() -> None:
    # Given two entries that are in fact one person
    registry = {"Melanie": ["Mel"], "Mrs. Smith": ["Mel's mom"], "Caroline": []}
    # When a batch shows names of both belong together
    updated = update_registry(registry, {"Mel": ["Mrs. Smith"]})
    # Then they merge under the older name; unrelated entries stay
    assert updated == {"Melanie": ["Mel", "Mrs. Smith", "Mel's mom"], "Caroline": []}


def test_names_differing_only_in_case_and_spacing_are_one_name() -> None:
    # Given a registry with "Dr. Kim"
    # When a batch names " dr.  kim " with no other alias
    updated = update_registry({"Dr. Kim": []}, {" dr.  kim ": []})
    # Then nothing new is added
    assert updated == {"Dr. Kim": []}


def test_aliases_are_normalised_across_two_batches(
    server: FakeOpenAIServer, make_extractor: Callable[..., LlmExtractor]
) -> None:
    # Given a first batch whose answer introduces 김민수 (alias 민수), merged into an empty registry
    extractor = make_extractor()
    first_answer = memory_answer(
        characters=[{"name": "김민수", "aliases": ["민수"]}],
        key_dialogue=[{"speaker": "김민수", "quote": "안녕!"}],
    )
    server.script((200, chat_completion(as_content(first_answer))))
    first = extractor.extract(turns(("김민수", "안녕!", "")), ExtractionContext())
    registry = update_registry({}, json.loads(str(first.metadata["characters_json"])))
    # When a second batch is extracted with that registry and the model calls him by an alias
    second_answer = memory_answer(
        characters=[{"name": "민수", "aliases": ["민수 씨"]}],
        key_dialogue=[{"speaker": "민수 씨", "quote": "또 봐!"}],
    )
    server.script((200, chat_completion(as_content(second_answer))))
    second = extractor.extract(turns(("민수", "또 봐!", "")), ExtractionContext(known_characters=registry))
    registry = update_registry(registry, json.loads(str(second.metadata["characters_json"])))
    # Then the second prompt lists the known character, and every name maps to the canonical one
    assert '- "김민수": "민수"' in prompt_text(server.requests[1])
    assert second.fields.characters == ["김민수"]
    assert second.fields.key_dialogue == ["김민수: 또 봐!"]
    assert registry == {"김민수": ["민수", "민수 씨"]}
