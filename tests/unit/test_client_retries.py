"""The Python client's answers to failure: which statuses it retries and how long it waits, and the
exceptions that carry the API's error body. The API is httpx's MockTransport (no sockets)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest

from memory_engine_client import (
    AsyncMemoryEngine,
    Conflict,
    InvalidRequest,
    MemoryEngine,
    NotFound,
    RateLimited,
    RetryPolicy,
    TransportError,
    Unavailable,
)

OK = {"status": "success", "message": None}
Answer = Callable[[httpx.Request], httpx.Response]


def scripted(*responses: httpx.Response | Exception) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport answering each request with the next response (or raising the next error)."""
    seen: list[httpx.Request] = []
    pending = list(responses)

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        step = pending.pop(0)
        if isinstance(step, Exception):
            raise step
        return step

    return httpx.MockTransport(answer), seen


def client(transport: httpx.MockTransport, waits: list[float], retries: int = 3) -> MemoryEngine:
    return MemoryEngine(
        "http://api.test", "key", transport=transport, retry=RetryPolicy(retries=retries), sleep=waits.append
    )


def consolidate(engine: MemoryEngine) -> object:
    return engine.consolidate("s1", "t1", {"uuid": "d1", "query": "hello"})


def test_a_429_is_retried_after_the_seconds_its_retry_after_header_names() -> None:
    transport, seen = scripted(
        httpx.Response(429, headers={"Retry-After": "2"}, json={"status": "error", "message": "slow down"}),
        httpx.Response(200, json=OK),
    )
    waits: list[float] = []

    result = consolidate(client(transport, waits))

    assert result is not None and len(seen) == 2
    assert waits == [2.0]


def test_a_503_without_retry_after_backs_off_exponentially_then_succeeds() -> None:
    unavailable = httpx.Response(503, json={"status": "error", "message": "store down", "errors": []})
    transport, seen = scripted(unavailable, unavailable, httpx.Response(200, json=OK))
    waits: list[float] = []

    consolidate(client(transport, waits))

    assert len(seen) == 3
    first, second = waits
    assert 0.25 <= first <= 0.5 and 0.5 <= second <= 1.0


def test_after_the_last_retry_the_429_is_raised_with_its_retry_after() -> None:
    limited = httpx.Response(429, headers={"Retry-After": "7"}, json={"status": "error", "message": "slow"})
    transport, seen = scripted(limited, limited)
    waits: list[float] = []

    with pytest.raises(RateLimited) as raised:
        consolidate(client(transport, waits, retries=1))

    assert len(seen) == 2 and waits == [7.0]
    assert raised.value.retry_after == 7.0 and raised.value.status == 429


@pytest.mark.parametrize(
    ("status", "kind"), [(400, InvalidRequest), (404, NotFound), (409, Conflict), (422, InvalidRequest)]
)
def test_a_4xx_is_never_retried(status: int, kind: type[Exception]) -> None:
    transport, seen = scripted(httpx.Response(status, json={"status": "error", "message": "no"}))
    waits: list[float] = []

    with pytest.raises(kind):
        consolidate(client(transport, waits))

    assert len(seen) == 1 and waits == []


def test_a_500_is_not_retried_since_the_request_may_have_half_run() -> None:
    transport, seen = scripted(httpx.Response(500, text="Internal Server Error"))

    with pytest.raises(Exception, match="Internal Server Error"):
        consolidate(client(transport, []))

    assert len(seen) == 1


def test_a_connection_that_never_opened_is_retried() -> None:
    transport, seen = scripted(httpx.ConnectError("refused"), httpx.Response(200, json=OK))

    consolidate(client(transport, []))

    assert len(seen) == 2


def test_a_read_timeout_is_raised_as_a_transport_error_without_a_retry() -> None:
    # The request reached the API: a bank create sent again would store the fact twice.
    transport, seen = scripted(httpx.ReadTimeout("slow"))

    with pytest.raises(TransportError, match="timed out"):
        client(transport, []).bank_create("a fact", {"user_id": "1"})

    assert len(seen) == 1


def test_a_422_carries_the_fields_the_api_named() -> None:
    body = {
        "status": "error",
        "message": "Invalid request: new_dialog.query: is required.",
        "errors": [{"field": "new_dialog.query", "message": "is required"}],
    }
    transport, _ = scripted(httpx.Response(422, json=body))

    with pytest.raises(InvalidRequest) as raised:
        consolidate(client(transport, []))

    assert raised.value.fields == ["new_dialog.query"]
    assert raised.value.message == body["message"] and raised.value.body == body


def test_the_game_envelope_and_openai_error_object_are_read_too() -> None:
    game = {"code": 404, "msg": "No session 'nope'", "data": None}
    openai = {"error": {"message": "userid: bad", "type": "invalid_request_error", "param": "userid"}}
    transport, _ = scripted(httpx.Response(404, json=game), httpx.Response(422, json=openai))
    engine = client(transport, [])

    with pytest.raises(NotFound, match="No session 'nope'"):
        engine.game_record("nope", [{"message": "hi"}])
    with pytest.raises(InvalidRequest) as raised:
        engine.forget_user("x")

    assert raised.value.fields == ["userid"]


def test_the_async_client_retries_a_503_as_the_sync_one_does() -> None:
    unavailable = httpx.Response(
        503, headers={"Retry-After": "1"}, json={"status": "error", "message": "busy"}
    )
    seen: list[httpx.Request] = []
    pending = [
        unavailable,
        unavailable,
        httpx.Response(200, json={"status": "ok", "service": "memory-engine"}),
    ]

    async def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return pending.pop(0)

    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def main() -> str:
        async with AsyncMemoryEngine(
            "http://api.test", transport=httpx.MockTransport(answer), sleep=sleep
        ) as api:
            return (await api.health()).status

    assert asyncio.run(main()) == "ok"
    assert len(seen) == 3 and waits == [1.0, 1.0]


def test_after_the_retries_a_503_is_raised_as_unavailable() -> None:
    unavailable = httpx.Response(503, json={"status": "error", "message": "index down"})
    transport, _ = scripted(unavailable, unavailable)

    with pytest.raises(Unavailable, match="index down"):
        consolidate(client(transport, [], retries=1))
