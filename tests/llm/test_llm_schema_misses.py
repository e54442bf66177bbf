"""Answers that miss the schema: read leniently where the meaning is unambiguous, capped at 3 per
job otherwise, with the tokens of failed answers counted and the error kept on the dead job."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memory_engine_app import local_engine

pytest.importorskip("openai")

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.adapters.openai import LlmBadOutput, LlmExtractor
from memory_engine.adapters.openai.client import RetryPolicy
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.limits import Limits
from memory_engine.models.api import ConsolidateRequest
from memory_engine.ports import ExtractionContext
from memory_engine.settings import Settings
from memory_engine.usecases import consolidate
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion
from tests.fakes.ports import HashEmbedder, StepClock
from tests.llm.builders import as_content, memory_answer, turns

Make = Callable[..., LlmExtractor]
EN = ExtractionContext(user_name="Caroline", language="en")
BATCH = turns(
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.", ""),
    ("Melanie", "Wow, Caro, I'm proud of you! How did it feel?", ""),
)
NOT_JSON = "Sure! Here is the memory you asked for."


def test_plain_strings_where_objects_are_expected_are_read_without_a_repair(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given an answer with facts, quotes and characters as plain strings
    answer = memory_answer(
        key_facts=["Caroline went to an LGBTQ support group.", "Melanie is proud of Caroline."],
        key_dialogue=["Caroline: It was so powerful.", "Melanie: I'm proud of you!"],
        characters=["Caroline", "Melanie"],
    )
    server.script((200, chat_completion(as_content(answer))))

    # When a batch is extracted
    extraction = make_extractor().extract(BATCH, EN)

    # Then one request was enough and each string landed in its field
    assert len(server.requests) == 1
    fields = extraction.fields
    assert fields.key_facts == ["Caroline went to an LGBTQ support group.", "Melanie is proud of Caroline."]
    assert fields.key_dialogue == ["Caroline: It was so powerful.", "Melanie: I'm proud of you!"]
    assert fields.characters == ["Caroline", "Melanie"]


def test_objects_of_one_text_field_where_strings_are_expected_are_read_as_those_strings(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    answer = memory_answer(keywords=[{"keyword": "support group"}, {"text": "pride"}])
    server.script((200, chat_completion(as_content(answer))))

    extraction = make_extractor().extract(BATCH, EN)

    assert len(server.requests) == 1 and extraction.fields.keywords == ["support group", "pride"]


def test_an_answer_that_is_still_ambiguous_gets_a_repair(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # An object with two text fields where a keyword is expected: which one is the keyword?
    answer = memory_answer(keywords=[{"keyword": "pride", "why": "the march"}])
    server.script(
        (200, chat_completion(as_content(answer))), (200, chat_completion(as_content(memory_answer())))
    )

    make_extractor().extract(BATCH, EN)

    assert len(server.requests) == 2


def test_prose_fields_given_as_lists_of_sentences_are_joined_without_a_repair(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given an answer with intent and summary as lists of sentences (as the 1.5B model wrote intent)
    answer = memory_answer(
        intent=["Caroline wants to share her experience.", "Melanie wants to support her."],
        summary=["Caroline went to a support group.", "Melanie was proud."],
    )
    server.script((200, chat_completion(as_content(answer))))

    # When a batch is extracted
    extraction = make_extractor().extract(BATCH, EN)

    # Then one request was enough, and each list became one text
    assert len(server.requests) == 1
    assert extraction.fields.intent == "Caroline wants to share her experience. Melanie wants to support her."
    assert extraction.fields.summary == "Caroline went to a support group. Melanie was proud."


def test_an_answer_wrapped_in_one_extra_key_is_read_as_the_answer(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given the answer wrapped in the schema's own word, as the 1.5B model wrapped every Korean one
    server.script((200, chat_completion(as_content({"properties": memory_answer()}))))

    # When a batch is extracted
    extraction = make_extractor().extract(BATCH, EN)

    # Then the inner object is the memory
    assert len(server.requests) == 1
    assert extraction.fields.summary == memory_answer()["summary"]


def test_a_wrapper_that_does_not_hold_the_answer_still_gets_a_repair(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given one key around an object that is not a memory (nothing to take it for)
    server.script(
        (200, chat_completion(as_content({"properties": {"type": "object", "title": "Memory"}}))),
        (200, chat_completion(as_content(memory_answer()))),
    )

    # When a batch is extracted
    make_extractor().extract(BATCH, EN)

    # Then the answer was not guessed at: a repair followed
    assert len(server.requests) == 2


def test_null_texts_single_items_and_comma_separated_keywords_are_read_as_meant(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given null intent and location, one fact and one character given alone, keywords in one string
    answer = memory_answer(
        intent=None,
        location=None,
        key_facts={"turn": None, "fact": "Caroline went to a support group."},
        characters={"name": "Caroline", "aliases": "Caro"},
        keywords="support group, pride，LGBTQ",
    )
    server.script((200, chat_completion(as_content(answer))))

    # When a batch is extracted
    extraction = make_extractor().extract(BATCH, EN)

    # Then each is what it obviously means, with no repair (Melanie, a speaker, joins Caroline)
    fields = extraction.fields
    assert len(server.requests) == 1
    assert (fields.intent, fields.location) == ("", "")
    assert fields.key_facts == ["Caroline went to a support group."]
    assert json.loads(str(extraction.metadata["characters_json"])) == {"Caroline": ["Caro"], "Melanie": []}
    assert fields.keywords == ["support group", "pride", "LGBTQ"]


def test_a_model_that_keeps_missing_the_schema_gets_three_answers_then_the_error_says_what_it_cost(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    server.script(*[(200, chat_completion(NOT_JSON, prompt_tokens=100, completion_tokens=50))] * 4)

    with pytest.raises(LlmBadOutput, match="no valid answer in 3 requests") as raised:
        make_extractor(retry=RetryPolicy(content_attempts=3)).extract(BATCH, EN)

    assert len(server.requests) == 3
    assert raised.value.spent == {
        "requests": 3,
        "prompt_tokens": 300,
        "completion_tokens": 150,
        "tokens_estimated": 0,
    }


@pytest.fixture
def engine(server: FakeOpenAIServer, tmp_path: Path) -> Iterator[Engine]:
    settings = Settings(
        extractor="llm",
        llm_model="test-model",
        openai_base_url=server.base_url,
        openai_api_key="sk-test",
        worker_retry_base_seconds=0,
    )  # type: ignore[call-arg]
    path = tmp_path / "memory-engine.sqlite3"
    yield Engine(
        limits=Limits.of(settings),
        store=SqliteStore(path),
        queue=SqliteQueue(path),
        index=LocalSearchIndex(),
        embedder=HashEmbedder(),
        extractor=wiring.build_extractor(settings),
        clock=StepClock(),
    )


def test_a_job_whose_answers_keep_missing_the_schema_dies_after_three_model_calls_with_its_error(
    server: FakeOpenAIServer, engine: Engine
) -> None:
    # Given a model that never answers JSON (about 20 calls per job before this cap)
    server.script(*[(200, chat_completion(NOT_JSON))] * 20)
    for n in range(20):
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "t",
            "new_dialog": {"uuid": f"d{n}", "query": "hi"},
        }
        consolidate.run(engine, "acme", ConsolidateRequest.model_validate(request))

    # When the worker runs until the queue is idle
    local_engine.local_worker(engine, sweep=False).drain()

    # Then the job made 3 model calls in all, and its dead letter says why and what it cost
    assert len(server.requests) == 3
    [dead] = engine.queue.dead_letters()  # type: ignore[attr-defined]
    assert dead.receive_count == 1
    assert dead.error.startswith("[3 LLM requests, 300 prompt + 150 completion tokens spent] LlmBadOutput:")
    assert len(engine.store.buffered_turns("acme", "s1")) == 20
