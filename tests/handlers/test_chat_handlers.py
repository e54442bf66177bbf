"""The chat dialect through its lambda_handlers, with a local OpenAI-compatible stub upstream."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from memory_engine.adapters.openai.upstream import HttpChatUpstream
from memory_engine.edge.streaming import stream_sink
from memory_engine.engine import Engine
from memory_engine.models.messages import ChatMemoryJob, ForgetUserJob
from memory_engine.settings import reset_settings
from memory_engine_app.server.apigw import LocalContext
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion, error_body
from tests.fakes.ports import ListQueue
from tests.handlers.dialects import Answer, call, sample_body

USER = "7f3c2a9e-4b1d-4c8e-9a6f-2d5e8b1c0f47"


@pytest.fixture
def upstream(engine: Engine) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        engine.chat = HttpChatUpstream(fake.base_url, api_key="upstream-key", timeout_s=5)
        yield fake


def queued(engine: Engine) -> list[object]:
    assert isinstance(engine.queue, ListQueue)
    return list(engine.queue.jobs)


def test_the_sample_event_gets_the_upstream_answer_unchanged(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    completion = chat_completion("Pepper is a great name!")
    upstream.script((200, completion))

    answer = call("chat_completions")

    assert (answer.status, answer.json) == (200, completion)
    assert "userid" not in upstream.requests[0]
    assert upstream.recorded[0].headers["Authorization"] == "Bearer upstream-key"
    [job] = queued(engine)
    assert isinstance(job, ChatMemoryJob) and job.answer == "Pepper is a great name!"


def test_a_streamed_request_answers_sse_chunks_ending_in_done(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    upstream.script((200, chat_completion("Pepper is a great name!")))

    answer = call("chat_completions", {**sample_body("chat_completions"), "stream": True})

    assert answer.status == 200 and answer.headers["Content-Type"] == "text/event-stream"
    events = [line.removeprefix("data: ") for line in answer.text.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    deltas = [json.loads(event)["choices"][0]["delta"].get("content", "") for event in events[:-1]]
    assert "".join(deltas) == "Pepper is a great name!"
    assert len(queued(engine)) == 1


def test_under_a_streaming_runtime_the_handler_hands_over_live_events(upstream: FakeOpenAIServer) -> None:
    upstream.script((200, chat_completion("one two three")))
    from functions.chat_completions.handler import lambda_handler
    from tests.handlers.conftest import load_event

    event = load_event("chat_completions")
    event["body"] = json.dumps({**sample_body("chat_completions"), "stream": True})
    with stream_sink() as sink:
        result = lambda_handler(event, LocalContext())

    assert (result["statusCode"], result["body"]) == (200, "")
    assert sink.events is not None
    assert list(sink.events)[-1] == b"data: [DONE]\n\n"


LEAKY = "engine crashed at http://10.0.3.7:8000/internal/v1 with key sk-live-4f9a8b7c6d5e4f3a2b1c0d9e"


def assert_nothing_leaked(answer: Answer) -> None:
    assert "10.0.3.7" not in answer.text and "sk-live" not in answer.text and "crashed" not in answer.text


def test_an_upstream_400_is_the_engines_own_400_with_only_the_models_code_and_param(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    # Given an upstream that refuses the request as invalid, quoting an internal URL and a key
    refusal = {"error": {"message": LEAKY, "type": "invalid_request_error", "param": "messages",
                         "code": "context_length_exceeded"}}  # fmt: skip
    upstream.script((400, refusal))
    # When a chat is sent
    answer = call("chat_completions")
    # Then the caller gets a 400 in the engine's words, with the model's code and param, not its text
    assert answer.status == 400
    assert answer.json["error"] == {
        "message": "The chat model refused the request as invalid (400): context_length_exceeded: "
        "check the fields it reads (`model`, `messages` and the sampling options).",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    assert_nothing_leaked(answer)
    assert queued(engine) == []


@pytest.mark.parametrize("status", [401, 403])
def test_an_upstream_401_or_403_is_a_502_about_the_servers_credentials_not_the_callers_key(
    engine: Engine, upstream: FakeOpenAIServer, status: int
) -> None:
    # Given an upstream that refuses the server's own key, quoting it
    upstream.script((status, error_body(f"Incorrect API key provided: {LEAKY}", "invalid_request_error",
                                        code="invalid_api_key")))  # fmt: skip
    # When a chat is sent with a good engine key
    answer = call("chat_completions")
    # Then it is no 401 (the caller's key is fine) but a 502 telling the operator to check the model's key
    assert answer.status == 502 and answer.json["error"]["type"] == "upstream_error"
    assert "the operator should check the model's key" in answer.json["error"]["message"]
    assert answer.json["error"]["code"] is None
    assert_nothing_leaked(answer)


def test_an_upstream_404_says_the_model_is_not_served_there(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    upstream.script((404, error_body(f"The model `nope` does not exist at {LEAKY}", code="model_not_found")))

    answer = call("chat_completions", {**sample_body("chat_completions"), "model": "nope"})

    assert answer.status == 400
    assert (answer.json["error"]["param"], answer.json["error"]["code"]) == ("model", "model_not_found")
    assert "is not served there" in answer.json["error"]["message"]
    assert_nothing_leaked(answer)


def test_an_upstream_4xx_with_a_code_that_is_not_an_identifier_passes_no_code(
    upstream: FakeOpenAIServer,
) -> None:
    upstream.script((400, {"error": {"message": "bad", "param": "see http://10.0.3.7/x", "code": LEAKY}}))

    answer = call("chat_completions")

    assert (
        answer.status == 400
        and answer.json["error"]["code"] is None
        and answer.json["error"]["param"] is None
    )
    assert_nothing_leaked(answer)


def test_a_streamed_request_the_upstream_rate_limits_is_a_429_with_its_retry_after_not_a_stream(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    upstream.script(
        (429, error_body(f"Rate limit reached for {LEAKY}", "rate_limit_error"), {"Retry-After": "7"})
    )

    answer = call("chat_completions", {**sample_body("chat_completions"), "stream": True})

    assert answer.status == 429 and answer.headers["Retry-After"] == "7"
    assert answer.json["error"]["type"] == "rate_limit_error"
    assert (
        answer.json["error"]["message"] == "The chat model is rate-limiting this server (429): retry later."
    )
    assert_nothing_leaked(answer)
    assert queued(engine) == []


@pytest.mark.parametrize("status", [402, 409, 418])
def test_any_other_upstream_4xx_is_a_502_with_a_fixed_message(
    upstream: FakeOpenAIServer, status: int
) -> None:
    upstream.script((status, error_body(LEAKY)))

    answer = call("chat_completions")

    assert answer.status == 502
    assert answer.json["error"]["message"] == (
        f"The chat model refused the request ({status}); retry later, or ask the operator to check it."
    )
    assert_nothing_leaked(answer)


@pytest.mark.parametrize("status", [400, 401, 500])
def test_an_upstream_error_text_is_logged_with_its_keys_and_urls_redacted(
    upstream: FakeOpenAIServer, caplog: pytest.LogCaptureFixture, status: int
) -> None:
    upstream.script((status, error_body(LEAKY, "server_error")))

    with caplog.at_level("WARNING", logger="memory_engine.chat"):
        call("chat_completions")

    [detail] = [record.detail for record in caplog.records if hasattr(record, "detail")]
    assert detail == "engine crashed at [url] with key [redacted]"


def test_an_unreachable_upstream_is_a_502_in_openai_error_format(engine: Engine) -> None:
    engine.chat = HttpChatUpstream("http://127.0.0.1:9/v1", timeout_s=2)  # discard port: refused

    answer = call("chat_completions")

    assert answer.status == 502
    assert answer.json["error"]["type"] == "upstream_error"
    assert "unreachable" in answer.json["error"]["message"]
    assert queued(engine) == []


def test_an_upstream_5xx_is_a_502_with_a_fixed_message_not_the_upstreams_text(
    upstream: FakeOpenAIServer,
) -> None:
    # Given an upstream whose 5xx body quotes an internal URL and a key
    upstream.script((500, error_body(LEAKY, "server_error")))
    # When a chat is sent
    answer = call("chat_completions")
    # Then the client learns the status, and nothing of what the upstream wrote
    assert answer.status == 502
    assert answer.json["error"]["message"] == "The chat model failed (500); retry later."
    assert "10.0.3.7" not in answer.text and "sk-live" not in answer.text


def test_a_request_without_messages_is_a_422_in_openai_error_format(upstream: FakeOpenAIServer) -> None:
    answer = call("chat_completions", {"model": "m", "userid": USER})

    assert answer.status == 422
    assert (answer.json["error"]["type"], answer.json["error"]["param"]) == (
        "invalid_request_error",
        "messages",
    )
    assert upstream.requests == []


def test_the_sample_user_delete_event_deletes_and_queues_the_purge(engine: Engine) -> None:
    answer = call("forget_user")

    assert answer.status == 200
    assert answer.json == {
        "object": "user.memory.deleted",
        "userid": USER,
        "deleted": True,
        "deleted_memories": 0,
        "deleted_dialogs": 0,
    }
    assert queued(engine) == [ForgetUserJob(tenant="tenant-a", userid=USER)]


def test_deleting_a_user_with_a_uuid_that_is_not_v4_is_a_422(engine: Engine) -> None:
    v1 = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
    answer = call("forget_user", path=f"/v1/users/{v1}/memory", path_parameters={"userid": v1})

    assert answer.status == 422 and answer.json["error"]["param"] == "userid"
    assert queued(engine) == []


def test_the_model_list_names_the_configured_chat_model_in_openais_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a server whose chat requests default to "house-model"
    monkeypatch.setenv("MEMORY_ENGINE_CHAT_MODEL", "house-model")
    reset_settings()
    # When an OpenAI-style front-end lists the models
    answer = call("chat_models")
    # Then it gets OpenAI's list with that model
    assert answer.status == 200
    assert answer.json == {
        "object": "list",
        "data": [{"id": "house-model", "object": "model", "created": 0, "owned_by": "memory-engine"}],
    }


def test_the_model_list_is_empty_without_a_configured_chat_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_CHAT_MODEL", raising=False)
    reset_settings()

    answer = call("chat_models")

    assert (answer.status, answer.json) == (200, {"object": "list", "data": []})
