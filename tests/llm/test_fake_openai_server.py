"""The fake OpenAI-compatible server itself, as other tests (chat completions) will use it."""

from __future__ import annotations

import socket

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, chat_completion

openai = pytest.importorskip("openai")


def test_a_streamed_request_gets_server_sent_chunks_the_official_client_reads() -> None:
    # Given a scripted completion
    with FakeOpenAIServer([(200, chat_completion("Hello there, friend!"))]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        # When it is requested with stream=true and usage
        stream = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
    # Then the chunks rebuild the text, end with the finish reason, and carry usage
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == "Hello there, friend!"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 150
    assert server.requests[0]["stream"] is True


def test_an_exhausted_script_answers_an_error_and_the_server_stops_cleanly() -> None:
    # Given a server with nothing scripted
    server = FakeOpenAIServer().start()
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    # When a request comes
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        raised = False
    except openai.InternalServerError as exc:
        raised = "no scripted response" in str(exc)
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    server.stop()
    # Then it answered 500 saying why, and after stop the port is closed
    assert raised
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0
