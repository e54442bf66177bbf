"""The LLM extractor wired by configuration into the engine, against the local fake server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from memory_engine.adapters.openai import LlmUnavailable
from memory_engine.composition import wiring
from memory_engine.models.api import ConsolidateRequest
from memory_engine.ports import ExtractionContext
from memory_engine.settings import JOB_TAIL_SECONDS, Settings
from memory_engine.usecases import consolidate
from tests.fakes.engine import fake_engine, run_worker
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, chat_completion
from tests.llm.builders import as_content, memory_answer, prompt_text, turns
from tests.llm.recorded import LLAMA_CPP_JSON_SCHEMA_500


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


def test_a_llama_cpp_server_refusing_json_schema_still_gets_memories_built_with_the_default_mode(
    server: FakeOpenAIServer,
) -> None:
    # Given the default structured output (json_schema) and a server answering it as
    # llama-cpp-python does (HTTP 500), valid in JSON mode with a schema
    engine = fake_engine()
    engine.extractor = wiring.build_extractor(llm_settings(server))
    server.refuse_mode("json_schema", 500, LLAMA_CPP_JSON_SCHEMA_500)
    server.script(*[(200, chat_completion(as_content(memory_answer()))) for _ in range(2)])
    # When 20 turns are consolidated and the worker runs
    say_twenty("acme", engine, 1)
    memories = run_worker(engine)
    # Then both memories were built, in the mode the server takes
    assert len(memories) == 2
    assert {memory.metadata["structured_output"] for memory in memories} == {"json_object_schema"}


def test_the_batch_time_limit_and_the_retry_temperature_come_from_the_settings(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a batch limit of 50 ms, a retry temperature of 0.9 (the extractor's own setting, read
    # from the environment when it is built), and a model slower than the limit whose first
    # answer needs a repair
    monkeypatch.setenv("MEMORY_ENGINE_LLM_RETRY_TEMPERATURE", "0.9")
    settings = llm_settings(server).model_copy(update={"llm_batch_seconds": 0.05})
    extractor = wiring.build_extractor(settings)
    server.script(Scripted(200, chat_completion("Sure! Here is the memory."), delay_s=0.1))
    # When a batch is extracted
    # Then no repair starts past the limit (on a loaded host the limit may pass before the first
    # request is sent: then none is)
    with pytest.raises(LlmUnavailable, match="Gave up on the LLM after 0 s"):
        extractor.extract(turns(("Caroline", "hi", "")), ExtractionContext(language="en"))
    assert len(server.requests) <= 1
    server.clear_script()
    sent = len(server.requests)
    # And with room for it, the repair goes at the configured temperature
    roomy = wiring.build_extractor(settings.model_copy(update={"llm_batch_seconds": 60}))
    server.script(
        (200, chat_completion("Sure! Here is the memory.")),
        (200, chat_completion(as_content(memory_answer()))),
    )
    roomy.extract(turns(("Caroline", "hi", "")), ExtractionContext(language="en"))
    assert [request["temperature"] for request in server.requests[sent:]] == [0.0, 0.9]


def test_with_an_llm_a_job_in_hand_stays_invisible_for_a_whole_batch() -> None:
    # Given a 30 s visibility, a 600 s batch limit and 300 s per request
    limits = {"worker_visibility_seconds": 30, "llm_batch_seconds": 600, "llm_timeout_seconds": 300}
    # When the extractor is the LLM, or the built-in one
    llm = Settings(extractor="llm", **limits)  # type: ignore[arg-type]
    builtin = Settings(extractor="builtin", **limits)  # type: ignore[arg-type]
    # Then the LLM job is not handed out again before its last batch could have ended
    assert llm.job_visibility_seconds == 5 + 600 + JOB_TAIL_SECONDS
    assert builtin.job_visibility_seconds == 30


def test_none_in_the_environment_sends_no_temperature_and_no_token_limit(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the settings OpenAI's reasoning models need, from the environment
    monkeypatch.setenv("MEMORY_ENGINE_LLM_TEMPERATURE", "none")
    monkeypatch.setenv("MEMORY_ENGINE_LLM_MAX_OUTPUT_TOKENS", "")
    extractor = wiring.build_extractor(llm_settings(server))
    server.script((200, chat_completion(as_content(memory_answer()))))
    # When a batch is extracted
    extractor.extract(turns(("Caroline", "hi", "")), ExtractionContext(language="en"))
    # Then the request names neither
    [request] = server.requests
    assert "temperature" not in request and "max_tokens" not in request
