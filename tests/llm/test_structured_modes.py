"""Structured-output modes: a server that refuses one (llama-cpp-python answers `json_schema` with
HTTP 500) moves the extractor to the next mode instead of failing the batch until it is parked."""

from __future__ import annotations

from collections.abc import Callable

import pytest

pytest.importorskip("openai")

from memory_engine.adapters.openai import LlmExtractor, LlmUnavailable, LlmUnsupported
from memory_engine.adapters.openai.client import RetryPolicy
from memory_engine.adapters.openai.modes import refuses_mode
from memory_engine.extraction.prompts.render import compact_schema
from memory_engine.extraction.schema import MemoryOut, strict_json_schema
from memory_engine.ports import ExtractionContext
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion, error_body, response_format_mode
from tests.llm.builders import as_content, memory_answer, turns
from tests.llm.recorded import LLAMA_CPP_JSON_SCHEMA_500

Make = Callable[..., LlmExtractor]
EN = ExtractionContext(user_name="Caroline", language="en")
BATCH = turns(("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.", ""))
# One request per answer: the client's own 5xx retries would only repeat the refusal here.
ONE_TRY = RetryPolicy(transport_attempts=1)


def _modes(server: FakeOpenAIServer) -> list[str]:
    return [response_format_mode(request) for request in server.requests]


def test_a_server_answering_json_schema_with_500_gets_the_schema_in_json_mode_instead(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given llama-cpp-python's own answer to a json_schema request, and a valid answer after it
    server.refuse_mode("json_schema", 500, LLAMA_CPP_JSON_SCHEMA_500)
    server.script((200, chat_completion(as_content(memory_answer()))))
    # When a batch is extracted
    extraction = make_extractor(retry=ONE_TRY).extract(BATCH, EN)
    # Then the second request carried the schema in JSON mode, and the memory says so
    refused, answered = server.requests
    assert response_format_mode(refused) == "json_schema"
    assert answered["response_format"] == {"type": "json_object", "schema": strict_json_schema(MemoryOut)}
    assert extraction.metadata["structured_output"] == "json_object_schema"
    assert extraction.fields.summary == memory_answer()["summary"]


def test_the_schema_is_not_repeated_in_the_prompt_when_the_server_enforces_it(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given an extractor configured for JSON mode with a schema
    server.script((200, chat_completion(as_content(memory_answer()))))
    # When a batch is extracted
    make_extractor(structured_output="json_object_schema").extract(BATCH, EN)
    # Then the system prompt does not spend tokens on the schema the server's grammar enforces
    [request] = server.requests
    assert compact_schema(strict_json_schema(MemoryOut)) not in request["messages"][0]["content"]


def test_a_refused_mode_stays_refused_for_the_next_batches(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a server that refuses json_schema, and an extractor that already fell back once
    server.refuse_mode("json_schema", 500, LLAMA_CPP_JSON_SCHEMA_500)
    server.script(*[(200, chat_completion(as_content(memory_answer())))] * 2)
    extractor = make_extractor(retry=ONE_TRY)
    extractor.extract(BATCH, EN)
    # When a second batch is extracted
    extractor.extract(BATCH, EN)
    # Then it goes straight to the mode that worked
    assert _modes(server) == ["json_schema", "json_object_schema", "json_object_schema"]


def test_a_server_with_plain_json_mode_only_gets_the_schema_told_in_the_prompt(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a server that rejects both schema-carrying modes with a 400 naming the response format
    refusal = error_body("response_format: unsupported type", "invalid_request_error")
    server.refuse_mode("json_schema", 400, refusal)
    server.refuse_mode("json_object_schema", 400, refusal)
    server.script((200, chat_completion(as_content(memory_answer()))))
    # When a batch is extracted
    extraction = make_extractor().extract(BATCH, EN)
    # Then the third request is plain JSON mode with the schema in the system prompt
    assert _modes(server) == ["json_schema", "json_object_schema", "json_object"]
    assert compact_schema(strict_json_schema(MemoryOut)) in server.requests[-1]["messages"][0]["content"]
    assert extraction.metadata["structured_output"] == "json_object"


def test_a_server_refusing_every_mode_fails_the_batch_for_good_naming_each_answer(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a server that refuses every response format
    for mode in ("json_schema", "json_object_schema", "json_object"):
        server.refuse_mode(mode, 400, error_body(f"response_format {mode} is not supported"))
    # When a batch is extracted
    # Then one request per mode was made, and the error is final (the worker parks the job at once)
    with pytest.raises(
        LlmUnsupported, match=r"json_schema: 400.*json_object_schema: 400.*json_object: 400"
    ) as caught:
        make_extractor().extract(BATCH, EN)
    assert len(server.requests) == 3
    assert caught.value.final is True
    assert caught.value.spent["requests"] == 3


def test_a_mode_that_has_answered_is_not_abandoned_for_a_later_error(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a server that answered in json_schema once, then fails with an error naming the grammar
    server.script(
        (200, chat_completion(as_content(memory_answer()))),
        (500, error_body("failed to build grammar: out of memory", "server_error")),
    )
    extractor = make_extractor(retry=ONE_TRY)
    extractor.extract(BATCH, EN)
    # When the next batch is extracted
    # Then the failure is an ordinary one (retried later by the queue), in the same mode
    with pytest.raises(LlmUnavailable) as caught:
        extractor.extract(BATCH, EN)
    assert not isinstance(caught.value, LlmUnsupported)
    assert _modes(server) == ["json_schema", "json_schema"]


def test_an_error_about_something_else_is_not_taken_for_a_refused_mode(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a server whose context is too small for the request
    server.script(
        (
            400,
            error_body(
                "This model's maximum context length is 2048 tokens. However, you requested 4990 tokens."
            ),
        )
    )
    # When a batch is extracted
    # Then it fails once, saying what the server said, without trying another mode
    with pytest.raises(LlmUnavailable, match="maximum context length"):
        make_extractor().extract(BATCH, EN)
    assert _modes(server) == ["json_schema"]


@pytest.mark.parametrize(
    ("status", "message", "refused"),
    [
        (500, LLAMA_CPP_JSON_SCHEMA_500["error"]["message"], True),
        (
            400,
            "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            True,
        ),
        (400, "guided decoding backend failed", True),
        (401, "Incorrect API key provided (response_format checked later)", False),
        (404, "The model `qwen` does not exist", False),
        (429, "Rate limit reached for requests", False),
        (400, "This model's maximum context length is 2048 tokens.", False),
        (503, "Service Unavailable", False),
    ],
)
def test_a_refused_mode_is_told_by_the_status_and_the_words_of_the_error(
    status: int, message: str, refused: bool
) -> None:
    assert refuses_mode(status, message, {"error": {"message": message}}) is refused
