"""The LLM extractor wired by configuration into the engine, against the local fake server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from memory_engine import wiring
from memory_engine.models.api import ConsolidateRequest
from memory_engine.settings import Settings
from memory_engine.usecases import consolidate
from tests.fakes.engine import fake_engine, run_worker
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion
from tests.llm.builders import as_content, memory_answer, prompt_text


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def llm_settings(server: FakeOpenAIServer) -> Settings:
    return Settings(
        extractor="llm",
        llm_model="test-model",
        openai_base_url=server.base_url,
        openai_api_key="sk-test",
    )  # type: ignore[call-arg]


def say_twenty(engine_tenant: str, engine: object, start: int) -> None:
    for n in range(start, start + 20):
        request = ConsolidateRequest.model_validate(
            {
                "session_uuid": "s1",
                "parent_session_uuid": "thread",
                "new_dialog": {"uuid": f"d{n}", "query": f"Caroline went to the support group {n}"},
                "user_name": "Caroline",
                "language": "en",
            }
        )
        consolidate.run(engine, engine_tenant, request)  # type: ignore[arg-type]


def test_configuring_the_llm_extractor_builds_memories_from_the_model(server: FakeOpenAIServer) -> None:
    # Given the engine configured with extractor=llm against the fake endpoint
    engine = fake_engine()
    engine.extractor = wiring.build_extractor(llm_settings(server))
    server.script(*[(200, chat_completion(as_content(memory_answer()))) for _ in range(2)])
    # When 20 turns are consolidated and the worker runs
    say_twenty("acme", engine, 1)
    memories = run_worker(engine)
    # Then both memories carry the model's fields and its token counts
    assert len(memories) == 2
    assert memories[0].fields.summary == memory_answer()["summary"]
    assert memories[0].metadata["prompt_tokens"] == 100
    assert server.requests[0]["model"] == "test-model"


def test_the_thread_registry_carries_aliases_into_the_next_batch(server: FakeOpenAIServer) -> None:
    # Given a first extraction that names Caroline with the alias Caro
    engine = fake_engine()
    engine.extractor = wiring.build_extractor(llm_settings(server))
    server.script(*[(200, chat_completion(as_content(memory_answer()))) for _ in range(5)])
    say_twenty("acme", engine, 1)
    run_worker(engine)
    # Then the thread registry remembers the alias
    registry = engine.store.get_characters("acme", "thread")
    assert registry["Caroline"] == ["Caro"]
    # When the next batches are extracted
    say_twenty("acme", engine, 21)
    run_worker(engine)
    # Then their prompts carry the known characters and aliases
    later = prompt_text(server.requests[-1])
    assert "Caroline" in later and "Caro" in later


def test_llm_without_a_model_name_fails_with_a_message_naming_the_setting() -> None:
    with pytest.raises(Exception, match="MEMORY_ENGINE_LLM_MODEL"):
        wiring.build_extractor(Settings(extractor="llm"))  # type: ignore[call-arg]


def test_metadata_characters_json_is_valid_json(server: FakeOpenAIServer) -> None:
    engine = fake_engine()
    engine.extractor = wiring.build_extractor(llm_settings(server))
    server.script(*[(200, chat_completion(as_content(memory_answer()))) for _ in range(2)])
    say_twenty("acme", engine, 1)
    memory = run_worker(engine)[0]
    assert json.loads(str(memory.metadata["characters_json"]))["Melanie"] == ["Mel"]
