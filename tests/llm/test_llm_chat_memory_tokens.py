"""Chat memory's fact extraction counts every request's tokens, as the extraction worker does:
on what it writes, in the log once per call, and on the error of a call that failed (issue 42)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping

import pytest

from memory_engine.adapters.openai import LlmExtractor
from memory_engine.models.messages import ChatMemoryJob
from memory_engine.usecases import chat_memory
from memory_engine.usecases.jobs import describe, spent_on
from tests.fakes.engine import fake_engine
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion

USER = "7f3c2a9e-4b1d-4c8e-9a6f-2d5e8b1c0f47"
JOB = ChatMemoryJob(
    tenant="acme", userid=USER, dialog_uuid="d1", user_messages=["I adopted a dog named Bori."], language="en"
)


def operations(*ops: Mapping[str, object]) -> str:
    return json.dumps({"operations": list(ops)})


def counted(caplog: pytest.LogCaptureFixture) -> list[tuple[int, int]]:
    return [
        (getattr(record, "prompt_tokens", -1), getattr(record, "completion_tokens", -1))
        for record in caplog.records
        if record.getMessage() == "facts extracted"
    ]


def test_a_chat_memory_facts_tokens_are_counted_on_the_facts_and_in_the_log(
    server: FakeOpenAIServer, make_extractor: Callable[..., LlmExtractor], caplog: pytest.LogCaptureFixture
) -> None:
    # Given the LLM fact extractor, whose model adds one fact for 120 + 30 tokens
    engine = fake_engine()
    engine.facts = make_extractor()
    fact = {"op": "add", "id": None, "fact": "The user adopted a dog named Bori."}
    server.script((200, chat_completion(operations(fact), prompt_tokens=120, completion_tokens=30)))

    # When the worker runs the chat exchange's memory job
    with caplog.at_level(logging.INFO, logger="memory_engine.facts"):
        [change] = chat_memory.run(engine, JOB)

    # Then the fact carries what its extraction cost, and the log counts the call once
    spent = {
        key: change.memory.metadata.get(key) for key in ("prompt_tokens", "completion_tokens", "attempts")
    }
    assert spent == {"prompt_tokens": 120, "completion_tokens": 30, "attempts": 1}
    assert counted(caplog) == [(120, 30)]


def test_a_call_that_changes_no_fact_is_counted_too(
    server: FakeOpenAIServer, make_extractor: Callable[..., LlmExtractor], caplog: pytest.LogCaptureFixture
) -> None:
    # Given a model that finds nothing worth keeping
    engine = fake_engine()
    engine.facts = make_extractor()
    server.script((200, chat_completion(operations(), prompt_tokens=90, completion_tokens=5)))

    with caplog.at_level(logging.INFO, logger="memory_engine.facts"):
        changes = chat_memory.run(engine, JOB)

    assert changes == []
    assert counted(caplog) == [(90, 5)]


def test_a_failed_fact_extraction_says_what_its_requests_cost(
    server: FakeOpenAIServer, make_extractor: Callable[..., LlmExtractor]
) -> None:
    # Given a model that answers outside the schema every time
    engine = fake_engine()
    engine.facts = make_extractor()
    server.script(*[(200, chat_completion("not json", prompt_tokens=100, completion_tokens=10))] * 10)

    # When the job runs, it fails with what the failed requests cost (the worker logs it and a
    # dead letter starts with it)
    with pytest.raises(Exception) as failed:
        chat_memory.run(engine, JOB)
    asked = len(server.requests)
    assert asked > 1
    assert spent_on(failed.value) == {
        "requests": asked,
        "prompt_tokens": 100 * asked,
        "completion_tokens": 10 * asked,
        "tokens_estimated": 0,
    }
    assert describe(failed.value).startswith(
        f"[{asked} LLM requests, {100 * asked} prompt + {10 * asked} completion tokens spent]"
    )
