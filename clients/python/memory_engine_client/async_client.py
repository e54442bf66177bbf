"""`AsyncMemoryEngine`: the asyncio client (httpx), the same methods as `MemoryEngine`, awaited."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from memory_engine_client import bank, export, inspector, native
from memory_engine_client.call import Call, Plan, Together
from memory_engine_client.models import SessionResponse
from memory_engine_client.transport import (
    DEFAULT_TIMEOUT,
    Connection,
    RetryPolicy,
    extraction_done,
    never_sent,
    outcome,
    retry_after,
    unreachable,
    waited_too_long,
)

P = ParamSpec("P")
T = TypeVar("T")
Awaited = Coroutine[Any, Any, T]


def _sends(build: Callable[P, Call[T]]) -> Callable[Concatenate[AsyncMemoryEngine, P], Awaited[T]]:
    @functools.wraps(build)
    async def method(self: AsyncMemoryEngine, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.send(build(*args, **kwargs))

    return method


def _runs(build: Callable[P, Plan[T]]) -> Callable[Concatenate[AsyncMemoryEngine, P], Awaited[T]]:
    @functools.wraps(build)
    async def method(self: AsyncMemoryEngine, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.run(build(*args, **kwargs))

    return method


# Requests in flight at once, per client: far below the local server's 256 connection slots
# (memory_engine_app/server/sockets.py), so a batch of 100 never fills it for everyone else.
DEFAULT_MAX_CONCURRENCY = 8


class AsyncMemoryEngine:
    """The asyncio twin of `MemoryEngine` (same arguments, same methods, awaited); the calls of a
    plan that have no order between them are sent together, at most `max_concurrency` at a time
    (requests beyond it wait their turn in the client, not in the server's queue)."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.connection = Connection.resolve(url, api_key)
        self.retry = retry or RetryPolicy()
        self.max_concurrency = max_concurrency
        limits = httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency)
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport, limits=limits)
        self._slots = asyncio.Semaphore(max_concurrency)
        self._sleep = sleep

    async def send(self, call: Call[T]) -> T:
        """Send one call, retrying as the retry policy says; its result or its error."""
        async with self._slots:
            return await self._send(call)

    async def wait_for_extraction(
        self, session_uuid: str, *, timeout: float = 120.0, interval: float = 0.5, at_most_buffered: int = 0
    ) -> SessionResponse:
        """Wait until the session has at most `at_most_buffered` turns waiting for extraction (0: a
        forced extraction, or `extract_at_end`, has run); the session as it is then. Polls the
        inspector's session route, so it works on AWS alike; TimeoutError past `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            shown = await self.send(inspector.show_session(session_uuid))
            if extraction_done(shown, at_most_buffered):
                return shown
            if time.monotonic() + interval > deadline:
                raise TimeoutError(waited_too_long(session_uuid, shown, timeout))
            await self._sleep(interval)

    async def _send(self, call: Call[T]) -> T:
        request = self.connection.request(call)
        for attempt in range(self.retry.retries + 1):
            last = attempt == self.retry.retries
            try:
                response = await self._http.send(request)
            except httpx.TransportError as error:
                if last or not never_sent(error):
                    raise unreachable(call, error) from error
                await self._sleep(self.retry.wait(attempt, None))
                continue
            if last or response.status_code not in self.retry.statuses:
                return outcome(call, response)
            await self._sleep(self.retry.wait(attempt, retry_after(response)))
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def run(self, plan: Plan[T]) -> T:
        """Run a plan to its result; a `Together` step's calls go at once."""
        try:
            step = next(plan)
            while True:
                if isinstance(step, Together):
                    result: Any = list(await asyncio.gather(*(self.send(call) for call in step.calls)))
                else:
                    result = await self.send(step)
                step = plan.send(result)
        except StopIteration as done:
            return done.value

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryEngine:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    health = _sends(native.health)
    consolidate = _sends(native.consolidate)
    consolidate_conversation = _runs(native.consolidate_conversation)
    retrieve = _sends(native.retrieve)
    delete = _sends(native.delete)
    fork = _sends(native.fork)
    embed = _sends(native.embed)
    bank_create = _sends(bank.bank_create)
    bank_get = _sends(bank.bank_get)
    bank_correct = _sends(bank.bank_correct)
    bank_retire = _sends(bank.bank_retire)
    bank_revisions = _sends(bank.bank_revisions)
    key_facts = _sends(bank.key_facts)
    correct_key_fact = _sends(bank.correct_key_fact)
    retire_key_fact = _sends(bank.retire_key_fact)
    bank_delete = _sends(bank.bank_delete)
    bank_search = _sends(bank.bank_search)
    bank_list = _sends(bank.bank_list)
    bank_list_all = _runs(bank.bank_list_all)
    bank_generate = _sends(bank.bank_generate)
    forget_user = _sends(bank.forget_user)
    chat_completion = _sends(bank.chat_completion)
    list_models = _sends(bank.list_models)
    game_memory = _sends(bank.game_memory)
    game_record = _sends(bank.game_record)
    list_threads = _sends(inspector.list_threads)
    show_session = _sends(inspector.show_session)
    list_memories = _sends(inspector.list_memories)
    show_queue = _sends(inspector.show_queue)
    preview_delete = _sends(inspector.preview_delete)
    force_extract = _sends(inspector.force_extract)
    export_page = _sends(export.export_page)
