"""The Python client at a door's edge: text the API could never read is refused before sending,
naming the field; every refusal reaches the caller as a retryable error with words in it; the async
client keeps its requests in flight under a bound; waiting for a session's extraction. The API is
httpx's MockTransport (no sockets)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from memory_engine_client import (
    AsyncMemoryEngine,
    InvalidRequest,
    MemoryEngine,
    RateLimited,
    RetryPolicy,
    TransportError,
    Unavailable,
)

OK = {"status": "success", "message": None, "extraction_queued": False, "buffered": 1}
NO_RETRIES = RetryPolicy(retries=0)


def refusing(error: Exception) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        raise error

    return httpx.MockTransport(answer)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (
            lambda e: e.consolidate("s1", "t1", {"uuid": "d1", "query": "half an emoji \ud83d"}),
            "new_dialog.query",
        ),
        (lambda e: e.bank_create("a fact", {"user\udc00": "42"}), "scope"),
        (lambda e: e.embed(["fine", "bad \ud800"]), "text.1"),
        (lambda e: e.bank_get("memories/\ud800"), "name"),
        (
            lambda e: e.chat_completion({"messages": [{"role": "user", "content": "\udfff"}]}),
            "messages.0.content",
        ),
    ],
)
def test_text_utf8_cannot_encode_is_refused_before_sending_naming_the_field(call, field: str) -> None:
    # Given a client whose transport records what it is sent
    sent: list[httpx.Request] = []
    transport = httpx.MockTransport(lambda request: sent.append(request) or httpx.Response(200, json=OK))
    engine = MemoryEngine("http://api.test", "key", transport=transport)
    # When a call carries a lone surrogate
    with pytest.raises(InvalidRequest) as refused:
        call(engine)
    # Then nothing was sent and the error names the field and says what to do
    assert sent == []
    assert refused.value.fields == [field] and "UTF-8" in refused.value.message


@pytest.mark.parametrize(
    "error",
    [
        httpx.ConnectError("[Errno 111] Connection refused"),
        httpx.ReadError(""),  # a reset reads as an empty ReadError
        httpx.RemoteProtocolError(""),
    ],
)
def test_a_connection_refused_or_reset_is_a_retryable_error_with_words(error: Exception) -> None:
    engine = MemoryEngine("http://api.test", "key", transport=refusing(error), retry=NO_RETRIES)

    with pytest.raises(TransportError) as raised:
        engine.health()

    assert raised.value.retryable
    assert (
        raised.value.message.startswith("GET /v1/engine/health/ ") and raised.value.message.split(": ", 1)[1]
    )


def test_a_timeout_after_sending_is_not_retryable_since_it_may_still_run() -> None:
    engine = MemoryEngine(
        "http://api.test", "key", transport=refusing(httpx.ReadTimeout("")), retry=NO_RETRIES
    )

    with pytest.raises(TransportError) as raised:
        engine.health()

    assert not raised.value.retryable and "may still be running" in raised.value.message


@pytest.mark.parametrize(("status", "kind"), [(429, RateLimited), (503, Unavailable)])
def test_a_refusal_for_now_is_retryable_and_carries_the_apis_message(status: int, kind: type) -> None:
    body = {"status": "error", "message": "busy: try again in a second", "errors": []}
    transport = httpx.MockTransport(lambda request: httpx.Response(status, json=body))
    engine = MemoryEngine("http://api.test", "key", transport=transport, retry=NO_RETRIES)

    with pytest.raises(kind) as raised:
        engine.health()

    assert raised.value.retryable and raised.value.message == "busy: try again in a second"


def test_the_async_client_keeps_at_most_its_bound_of_requests_in_flight() -> None:
    # Given an async client bounded to 4 requests at once, and an API that counts them
    in_flight, most = 0, 0

    async def answer(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0)  # let every other waiting request in, were it allowed
        await asyncio.sleep(0)
        in_flight -= 1
        return httpx.Response(200, json={"status": "ok", "service": "memory-engine"})

    async def work() -> int:
        async with AsyncMemoryEngine(
            "http://api.test", "key", max_concurrency=4, transport=httpx.MockTransport(answer)
        ) as engine:
            # When 100 calls are made at once
            answers = await asyncio.gather(*(engine.health() for _ in range(100)))
        return len(answers)

    # Then all were answered, never more than 4 at a time
    assert asyncio.run(work()) == 100
    assert most == 4


def test_the_default_bound_is_below_what_the_local_server_accepts() -> None:
    from memory_engine.settings import ServerSettings

    engine = AsyncMemoryEngine("http://api.test", "key")

    assert engine.max_concurrency < ServerSettings().server_max_connections


def session(buffered: int) -> dict[str, object]:
    view = {
        "session_uuid": "s1",
        "parent_session_uuid": "t1",
        "user_name": "Alex",
        "language": "en",
        "created_at": "2026-01-01T00:00:00Z",
    }
    counts = {"buffered": buffered, "extracted": 3 - buffered, "forgotten": 0}
    return {"status": "success", "session": view, "counts": counts, "turns": [], "memories": []}


def test_waiting_for_extraction_polls_the_session_until_nothing_is_buffered() -> None:
    # Given a session whose 3 turns are extracted by the third look
    answers = iter([session(3), session(3), session(0)])
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url.params["session_uuid"]))
        return httpx.Response(200, json=next(answers))

    waits: list[float] = []
    engine = MemoryEngine("http://api.test", "key", transport=httpx.MockTransport(answer), sleep=waits.append)
    # When the caller waits for its extraction
    shown = engine.wait_for_extraction("s1", interval=0.25)
    # Then it returned the session once nothing was buffered, having looked three times
    assert shown.counts.buffered == 0 and seen == ["s1"] * 3 and waits == [0.25, 0.25]


def test_waiting_for_extraction_gives_up_with_a_timeout_error_naming_the_session() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=session(2)))
    engine = MemoryEngine("http://api.test", "key", transport=transport, sleep=lambda s: None)

    with pytest.raises(TimeoutError, match="session s1 still has 2 turns"):
        engine.wait_for_extraction("s1", timeout=0.0)


def test_the_async_client_waits_for_extraction_alike() -> None:
    answers = iter([session(1), session(0)])

    async def work() -> int:
        transport = httpx.MockTransport(lambda request: httpx.Response(200, json=next(answers)))
        async with AsyncMemoryEngine("http://api.test", "key", transport=transport, sleep=_no_wait) as engine:
            shown = await engine.wait_for_extraction("s1")
        return shown.counts.buffered or 0

    assert asyncio.run(work()) == 0


async def _no_wait(seconds: float) -> None:
    return None


def test_the_consolidate_answer_says_whether_an_extraction_was_queued() -> None:
    queued = {**OK, "extraction_queued": True, "buffered": 20}
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=json.dumps(queued)))
    engine = MemoryEngine("http://api.test", "key", transport=transport)

    answer = engine.consolidate("s1", "t1", {"uuid": "d20", "query": "the twentieth turn"})

    assert answer.extraction_queued and answer.buffered == 20
