"""The local server's whole request path in process: dispatcher (auth, rate limit), the real
handlers, an engine over the SQLite store and queue, with fast fakes for the model and extractor.

Security and hardening tests drive it like a client would, without sockets (`call`) or over real
HTTP (`serve_http`), and play the worker when they choose (`drain`).

`moto_stack` is the same request path over the AWS adapters on moto (DynamoDB store and keys, SQS
FIFO queue), its `drain` the worker Lambda's handler fed as the event source mapping would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_keys import SqliteKeyStore
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.composition import wiring
from memory_engine.edge.auth import AnyKey, SingleKey, StoreKeys
from memory_engine.edge.ratelimit import RateLimiter
from memory_engine.engine import Engine
from memory_engine.limits import Limits
from memory_engine.models.messages import Job
from memory_engine.ports import Extractor, JobSource, KeyStore, Queue
from memory_engine.ports.clock import SystemClock
from memory_engine.settings import Settings
from memory_engine.usecases import keys
from memory_engine_app import local_engine
from memory_engine_app.server.dispatch import Dispatcher, load_routes
from memory_engine_app.server.http_handler import (
    DEFAULT_READ_TIMEOUT_S,
    DEFAULT_REQUEST_READ_S,
    make_http_handler,
)
from memory_engine_app.server.sockets import LocalHttpServer
from memory_engine_app.worker import LocalWorker
from tests.fakes.ports import EchoExtractor, HashEmbedder, RecordingChat

LOCAL_KEY = "me_local-test-key-0123456789"
Answer = tuple[int, dict[str, str], Any]


class StackQueue(Queue, JobSource, Protocol):
    """Both sides of the queue, and what operations read of it (SQLite and SQS alike)."""

    def pending_count(self) -> int: ...

    def dead_jobs(self) -> list[Job]: ...


@dataclass
class LocalStack:
    engine: Engine
    key_store: KeyStore
    queue: StackQueue
    dispatcher: Dispatcher
    tenant_keys: dict[str, str] = field(default_factory=dict)

    def key_for(self, tenant: str) -> str:
        """A store key for `tenant` (created on first use)."""
        if tenant not in self.tenant_keys:
            self.tenant_keys[tenant] = keys.create(self.key_store, SystemClock().now(), tenant).key
        return self.tenant_keys[tenant]

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        key: str | None = LOCAL_KEY,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """One request through the dispatcher; the answer's body decoded from JSON."""
        sent = dict(headers or {"Content-Type": "application/json"})
        if key is not None:
            sent.setdefault("Authorization", f"Bearer {key}")
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        path, _, query = path.partition("?")
        status, answer_headers, answer = self.dispatcher.dispatch(method, path, query, sent, data)
        return status, dict(answer_headers), json.loads(answer) if answer else None

    def worker(self) -> LocalWorker:
        return local_engine.local_worker(self.engine, sweep=False)

    def drain(self) -> int:
        """Play the worker until no job is ready; returns how many jobs ran."""
        return self.worker().drain()


@contextmanager
def local_stack(
    tmp_path: Path,
    *,
    rate: float = 0,
    burst: int = 1,
    extractor: Extractor | None = None,
    **settings: Any,
) -> Iterator[LocalStack]:
    """A stack on a fresh database file in `tmp_path`, installed as the handlers' engine."""
    path = tmp_path / "memory-engine.sqlite3"
    queue = SqliteQueue(path, max_receives=5)
    engine = _engine(SqliteStore(path), queue, extractor, settings)
    key_store = SqliteKeyStore(path)
    try:
        with _installed(LocalStack, engine, key_store, queue, rate, burst) as stack:
            yield stack
    finally:
        for closable in (key_store, queue, engine.store):
            closable.close()  # type: ignore[attr-defined]


class MotoStack(LocalStack):
    """The stack on the AWS adapters; the worker is the extraction Lambda's handler."""

    def drain(self) -> int:
        """Deliver jobs to the worker Lambda, one per invocation (the deployed batch size), until
        none is visible; returns how many invocations ran."""
        from functions.extraction_worker.handler import lambda_handler
        from tests.fakes.sqs_lambda import EventSourceMapping

        url: str = self.queue.queue_url  # type: ignore[attr-defined]
        return EventSourceMapping(url, lambda_handler, batch_size=1).drain()


@contextmanager
def moto_stack(
    *,
    rate: float = 0,
    burst: int = 1,
    extractor: Extractor | None = None,
    **settings: Any,
) -> Iterator[MotoStack]:
    """A stack on a fresh moto account: the engine's DynamoDB table (keys in it too) and its SQS
    FIFO queue with a dead-letter queue after 5 receives, as the CDK app builds them. The search
    index stays the local in-memory one: moto has no OpenSearch data plane."""
    from memory_engine.adapters.aws.dynamodb_api_keys import DynamoDbKeyStore
    from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
    from memory_engine.adapters.aws.sqs_queue import SqsQueue
    from tests.fakes.aws import REGION, create_queue, create_table, moto_aws

    with moto_aws():
        table, url = create_table(), create_queue(max_receives=5)
        queue = SqsQueue(url, REGION)
        engine = _engine(DynamoDbStore(table, REGION), queue, extractor, settings)
        with _installed(MotoStack, engine, DynamoDbKeyStore(table, REGION), queue, rate, burst) as stack:
            yield stack


def _engine(store: Any, queue: Any, extractor: Extractor | None, settings: dict[str, Any]) -> Engine:
    return Engine(
        # Retries at once and 5 attempts, as the queues here dead-letter after 5 receives: tests
        # play the worker without waiting out backoff delays.
        limits=Limits.of(
            Settings(
                **{
                    "chat_model": "test-model",
                    "worker_retry_base_seconds": 0,
                    "worker_max_receives": 5,
                    **settings,
                }
            )
        ),
        store=store,
        queue=queue,
        index=LocalSearchIndex(),
        embedder=HashEmbedder(),
        extractor=extractor or EchoExtractor(),
        chat=RecordingChat(),
    )


@contextmanager
def _installed(
    kind: type[LocalStack], engine: Engine, key_store: KeyStore, queue: Any, rate: float, burst: int
) -> Iterator[Any]:
    """The stack's dispatcher (the local key plus stored keys), its engine the handlers' one."""
    resolver = AnyKey([SingleKey(LOCAL_KEY), StoreKeys(key_store, SystemClock().now)])
    limiter = RateLimiter(rate, burst) if rate else None
    wiring.use(engine)
    try:
        yield kind(engine, key_store, queue, Dispatcher(load_routes(), resolver, limiter))
    finally:
        wiring.use(None)


@contextmanager
def serve_http(
    stack: LocalStack, read_timeout_s: float = DEFAULT_READ_TIMEOUT_S, **options: Any
) -> Iterator[str]:
    """The stack behind a real HTTP server on a free port (the local server's own class); yields
    its base URL. `options`: those of `http_server`."""
    with http_server(stack, read_timeout_s, **options) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


@contextmanager
def http_server(
    stack: LocalStack,
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
    request_read_s: float = DEFAULT_REQUEST_READ_S,
    max_connections: int = 256,
) -> Iterator[LocalHttpServer]:
    """`serve_http`, yielding the server itself."""
    handler = make_http_handler(stack.dispatcher, read_timeout_s, request_read_s)
    server = LocalHttpServer(("127.0.0.1", 0), handler, max_connections)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
