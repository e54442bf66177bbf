"""Streamed chat when the upstream misbehaves: a cut-off stream, an error mid-stream, a server that
answers a stream request with one JSON body. A cut answer never looks complete and is never
remembered; a whole one always ends in [DONE]."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_engine.adapters.openai.upstream import HttpChatUpstream
from memory_engine.engine import Engine
from memory_engine.models.messages import ChatMemoryJob
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, chat_completion, stream_chunks
from tests.fakes.ports import ListQueue
from tests.fakes.stack import LOCAL_KEY, local_stack, serve_http
from tests.handlers.dialects import call, sample_body

STREAMED = {**sample_body("chat_completions"), "stream": True}


@pytest.fixture
def upstream(engine: Engine) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        engine.chat = HttpChatUpstream(fake.base_url, api_key="upstream-key", timeout_s=5)
        yield fake


def events(text: str) -> list[str]:
    return [block.removeprefix("data: ") for block in text.split("\n\n") if block]


def queued(engine: Engine) -> list[object]:
    assert isinstance(engine.queue, ListQueue)
    return list(engine.queue.jobs)


def content(payloads: list[str]) -> str:
    deltas = [
        json.loads(p)["choices"][0]["delta"].get("content") or "" for p in payloads if '"choices": [{' in p
    ]
    return "".join(deltas)


def test_a_stream_cut_off_by_the_upstream_ends_in_an_error_event_not_done_and_is_not_remembered(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    # Given an upstream that closes the connection after two chunks
    upstream.script(Scripted(200, chat_completion("one two three four"), cut_after=2))
    # When a streamed chat is sent
    answer = call("chat_completions", STREAMED)
    # Then the client gets the two chunks, then an error in OpenAI's shape, and no [DONE]
    sent = events(answer.text)
    assert answer.status == 200 and len(sent) == 3 and "[DONE]" not in sent
    error = json.loads(sent[-1])["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == "upstream_error"
    assert "cut off" in error["message"]
    # And nothing of the cut answer is queued to be remembered
    assert queued(engine) == []


def test_an_error_chunk_from_the_upstream_ends_the_stream_with_an_error_event(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    chunks = stream_chunks(chat_completion("one two"))[:2]
    upstream.script((200, [*chunks, {"error": {"message": "model overloaded", "type": "server_error"}}]))

    sent = events(call("chat_completions", STREAMED).text)

    # The upstream's own text stays in the log (redacted); the client reads a fixed message
    assert "[DONE]" not in sent and "mid-stream" in json.loads(sent[-1])["error"]["message"]
    assert "model overloaded" not in sent[-1]
    assert queued(engine) == []


def test_a_non_stream_answer_to_a_stream_request_is_relayed_as_chunks_ending_in_done(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    # Given an upstream that ignores `stream` and answers one JSON completion
    upstream.script(Scripted(200, chat_completion("Pepper is a great name!"), no_stream=True))
    # When a streamed chat is sent
    answer = call("chat_completions", {**STREAMED, "stream_options": {"include_usage": True}})
    # Then the client gets the answer as chunks, the usage chunk, and [DONE]
    sent = events(answer.text)
    assert answer.headers["Content-Type"] == "text/event-stream" and sent[-1] == "[DONE]"
    assert content(sent[:-1]) == "Pepper is a great name!"
    assert json.loads(sent[-2])["usage"]["total_tokens"] == 150
    assert all(json.loads(p)["object"] == "chat.completion.chunk" for p in sent[:-1])
    # And the whole exchange is remembered once
    [job] = queued(engine)
    assert isinstance(job, ChatMemoryJob) and job.answer == "Pepper is a great name!"


def test_a_stream_without_done_but_with_its_finish_reason_counts_as_complete(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    whole = stream_chunks(chat_completion("all of it"))
    upstream.script(Scripted(200, chat_completion("all of it"), cut_after=len(whole)))

    sent = events(call("chat_completions", STREAMED).text)

    assert sent[-1] == "[DONE]" and content(sent[:-1]) == "all of it"
    assert len(queued(engine)) == 1


def test_the_openai_client_raises_on_a_cut_off_stream_from_the_local_server(tmp_path: Path) -> None:
    openai = pytest.importorskip("openai")
    # Given the local server in front of an upstream that cuts its stream
    with local_stack(tmp_path) as stack, FakeOpenAIServer() as fake, serve_http(stack) as base:
        stack.engine.chat = HttpChatUpstream(fake.base_url, timeout_s=5)
        fake.script(Scripted(200, chat_completion("one two three four"), cut_after=2))
        client = openai.OpenAI(base_url=f"{base}/v1", api_key=LOCAL_KEY, max_retries=0)
        # When the official client reads the stream
        # Then it raises the error the engine put in the stream, after the first chunks
        received: list[Any] = []
        with pytest.raises(openai.APIError, match="cut off"):
            for chunk in client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            ):
                received.append(chunk)
        assert len(received) == 2


def test_an_unreachable_upstream_is_named_in_the_log_not_in_the_answer(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    engine.chat = HttpChatUpstream("http://127.0.0.1:9/v1", timeout_s=2)  # discard port: refused

    with caplog.at_level("WARNING", logger="memory_engine.chat"):
        answer = call("chat_completions")

    assert answer.status == 502 and "127.0.0.1:9" not in answer.text
    assert any(getattr(r, "upstream", "").startswith("http://127.0.0.1:9/") for r in caplog.records)


def test_a_stream_trickling_past_the_deadline_ends_at_the_deadline_with_an_error_event(
    engine: Engine, upstream: FakeOpenAIServer
) -> None:
    # Given a model sending a chunk every 0.3 s: each wait is short, the whole answer is not
    chunks = stream_chunks(chat_completion(" ".join(f"word{n}" for n in range(12))))
    upstream.script(Scripted(200, chunks * 4, chunk_delay_s=0.3))
    engine.chat = HttpChatUpstream(upstream.base_url, timeout_s=2, deadline_s=1)
    # When a streamed chat is sent (one buffered body, as behind API Gateway)
    answer = call("chat_completions", STREAMED)
    # Then the body ends at the deadline with OpenAI's error event, and no [DONE] (the whole answer
    # takes 14 s: its end would be there had the deadline not cut it; no timed assert, the host
    # may be loaded)
    sent = events(answer.text)
    assert "[DONE]" not in sent
    assert "within 1 s" in json.loads(sent[-1])["error"]["message"]
