"""The extractor's requests are streamed: an abandoned answer's connection is closed, so its server
stops generating and a retry never waits behind it; every request's tokens are counted, those of
cut, broken and unreported answers estimated (issue 42 §7). Against a fake streaming upstream: a
held stream sends keep-alive comments until its client goes, so only the request's own deadline
(the watchdog, not a socket timeout) can end it; no assertion depends on how long anything took."""

from __future__ import annotations

import pytest

pytest.importorskip("openai")

from memory_engine.adapters.openai import LlmExtractor, LlmUnavailable, chat_client
from memory_engine.adapters.openai.client import RetryPolicy
from memory_engine.adapters.openai.streaming import prompt_estimate
from memory_engine.ports import ExtractionContext
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, chat_completion, stream_chunks
from tests.llm.builders import MODEL, as_content, memory_answer, turns

EN = ExtractionContext(user_name="Caroline", language="en")
BATCH = turns(
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.", ""),
    ("Melanie", "Wow, Caro, I'm proud of you! How did it feel?", ""),
)
# Long enough for a slow CI host to answer a quick request; a held one is cut after it.
REQUEST_S = 3.0
# How long a test waits for the fake to see its client go (it goes at REQUEST_S).
SEEN_GOING_S = 30.0


def _extractor(server: FakeOpenAIServer, sleeps: list[float], **options: object) -> LlmExtractor:
    options.setdefault("timeout_s", REQUEST_S)
    return LlmExtractor(
        chat_client()(model=MODEL, base_url=server.base_url, api_key="k", sleep=sleeps.append, **options)  # type: ignore[arg-type]
    )


def _good(**usage: int) -> dict[str, object]:
    return chat_completion(as_content(memory_answer()), **usage)


def test_every_request_is_streamed_and_asks_for_its_usage(
    server: FakeOpenAIServer, sleeps: list[float]
) -> None:
    # Given a server that streams
    server.script((200, _good(prompt_tokens=700, completion_tokens=90)))
    # When a batch is extracted
    extraction = _extractor(server, sleeps).extract(BATCH, EN)
    # Then the request asked for a stream with its usage, and the reported usage was counted
    [request] = server.requests
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    assert extraction.metadata["prompt_tokens"] == 700 and extraction.metadata["completion_tokens"] == 90
    assert extraction.metadata["tokens_estimated"] == 0
    assert extraction.fields.summary.startswith("Caroline told Melanie")


def test_an_answer_past_its_deadline_is_closed_so_its_server_stops_and_the_retry_is_answered(
    server: FakeOpenAIServer, sleeps: list[float]
) -> None:
    # Given a server that sends three chunks of an answer, then only keep-alive comments (a model
    # stuck mid-answer: a socket timeout never fires), and then answers the retry
    server.script(Scripted(200, _good(), hold_after=3), (200, _good(prompt_tokens=700, completion_tokens=90)))
    # When a batch is extracted with a per-request timeout
    extraction = _extractor(server, sleeps).extract(BATCH, EN)
    # Then the first answer's connection was closed by the client (its generation stopped)
    assert server.abandoned.acquire(timeout=SEEN_GOING_S)
    # And the retry's answer became the memory
    assert len(server.requests) == 2
    assert extraction.fields.summary.startswith("Caroline told Melanie")
    # And the cut request's tokens were counted too: its prompt estimated, its 2 content chunks
    # (the first chunk carries only the role)
    prompt = prompt_estimate(server.requests[0]["messages"])
    assert extraction.metadata["attempts"] == 2
    assert extraction.metadata["prompt_tokens"] == prompt + 700
    assert extraction.metadata["completion_tokens"] == 2 + 90
    assert extraction.metadata["tokens_estimated"] == 1


def test_no_streamed_answer_outlives_the_batchs_deadline(
    server: FakeOpenAIServer, sleeps: list[float]
) -> None:
    # Given a batch whose deadline is REQUEST_S away when its request starts, a per-request
    # timeout of 300 s, and a server that holds the answer
    server.script(Scripted(200, _good(), hold_after=1))
    readings = iter([0.0, 600.0 - REQUEST_S, 600.0 - REQUEST_S])
    extractor = _extractor(
        server,
        sleeps,
        timeout_s=300.0,
        clock=lambda: next(readings, 600.0),
        retry=RetryPolicy(deadline_s=600),
    )
    # When a batch is extracted
    # Then it gives up at the deadline, with the held answer's connection closed and its cost said
    with pytest.raises(LlmUnavailable, match="Gave up on the LLM after 600 s") as raised:
        extractor.extract(BATCH, EN)
    assert server.abandoned.acquire(timeout=SEEN_GOING_S)
    assert len(server.requests) == 1 and sleeps == []
    assert raised.value.spent["requests"] == 1
    assert raised.value.spent["prompt_tokens"] == prompt_estimate(server.requests[0]["messages"])
    assert raised.value.spent["tokens_estimated"] == 1


def test_a_server_that_reports_no_usage_has_its_tokens_estimated(
    server: FakeOpenAIServer, sleeps: list[float]
) -> None:
    # Given a server that streams without a usage chunk (llama-cpp-python)
    chunks = stream_chunks(_good(), include_usage=False)
    server.script((200, chunks))
    # When a batch is extracted
    extraction = _extractor(server, sleeps).extract(BATCH, EN)
    # Then the prompt is estimated and the answer counted one token per content chunk
    contents = [chunk for chunk in chunks if chunk["choices"] and chunk["choices"][0]["delta"].get("content")]
    assert extraction.metadata["prompt_tokens"] == prompt_estimate(server.requests[0]["messages"])
    assert extraction.metadata["completion_tokens"] == len(contents)
    assert extraction.metadata["tokens_estimated"] == 1


def test_a_stream_the_server_breaks_off_is_retried_and_counted(
    server: FakeOpenAIServer, sleeps: list[float]
) -> None:
    # Given a server that closes the connection after 4 chunks, then answers whole
    server.script(Scripted(200, _good(), cut_after=4), (200, _good(prompt_tokens=700, completion_tokens=90)))
    # When a batch is extracted
    extraction = _extractor(server, sleeps).extract(BATCH, EN)
    # Then the broken answer was retried, and its 3 content chunks and estimated prompt counted
    assert len(server.requests) == 2 and len(sleeps) == 1
    assert extraction.metadata["completion_tokens"] == 3 + 90
    assert extraction.metadata["prompt_tokens"] == prompt_estimate(server.requests[0]["messages"]) + 700


def test_a_server_that_ignores_stream_is_read_as_one_answer(
    server: FakeOpenAIServer, sleeps: list[float]
) -> None:
    # Given a server that answers a stream request with one JSON body
    server.script(Scripted(200, _good(prompt_tokens=640, completion_tokens=80), no_stream=True))
    # When a batch is extracted
    extraction = _extractor(server, sleeps).extract(BATCH, EN)
    # Then that body is the answer, its usage as reported
    assert extraction.fields.summary.startswith("Caroline told Melanie")
    assert extraction.metadata["prompt_tokens"] == 640 and extraction.metadata["tokens_estimated"] == 0


def test_an_error_event_in_the_stream_is_retried(server: FakeOpenAIServer, sleeps: list[float]) -> None:
    # Given a stream that carries an error event (an overloaded server), then a whole answer
    server.script(
        (200, [{"error": {"message": "overloaded", "type": "server_error"}}]),
        (200, _good()),
    )
    # When a batch is extracted
    extraction = _extractor(server, sleeps).extract(BATCH, EN)
    # Then the second request's answer is the memory
    assert len(server.requests) == 2
    assert extraction.fields.summary.startswith("Caroline told Melanie")
