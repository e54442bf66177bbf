"""The local server's whole request path in process: dispatcher (auth, rate limit), the real
handlers, an engine over the SQLite store and queue, with fast fakes for the model and extractor.

Security and hardening tests drive it like a client would, without sockets (`call`) or over real
HTTP (`serve_http`), and play the worker when they choose (`drain`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from memory_engine import wiring
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_keys import SqliteKeyStore
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.adapters.local.worker import LocalWorker
from memory_engine.auth import AnyKey, SingleKey, StoreKeys
from memory_engine.engine import Engine, SystemClock
from memory_engine.ports import Extractor
from memory_engine.ratelimit import RateLimiter
from memory_engine.server.app import Dispatcher, load_routes, make_http_handler
from memory_engine.settings import Settings
from memory_engine.usecases import jobs, keys
from tests.fakes.ports import EchoExtractor, HashEmbedder, RecordingChat

LOCAL_KEY = "me_local-test-key-0123456789"
Answer = tuple[int, dict[str, str], Any]


@dataclass
class LocalStack:
    engine: Engine
    key_store: SqliteKeyStore
    queue: SqliteQueue
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
        return LocalWorker(
            self.queue, lambda job, again: jobs.run(self.engine, job, again), 0.01, visibility_seconds=30
        )

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
    engine = Engine(
        settings=Settings(**{"chat_model": "test-model", **settings}),
        store=SqliteStore(path),
        queue=queue,
        index=LocalSearchIndex(),
        embedder=HashEmbedder(),
        extractor=extractor or EchoExtractor(),
        chat=RecordingChat(),
    )
    key_store = SqliteKeyStore(path)
    resolver = AnyKey([SingleKey(LOCAL_KEY), StoreKeys(key_store, SystemClock().now)])
    limiter = RateLimiter(rate, burst) if rate else None
    wiring.use(engine)
    try:
        yield LocalStack(engine, key_store, queue, Dispatcher(load_routes(), resolver, limiter))
    finally:
        wiring.use(None)
        for closable in (key_store, queue, engine.store):
            closable.close()  # type: ignore[attr-defined]


@contextmanager
def serve_http(stack: LocalStack) -> Iterator[str]:
    """The stack behind a real HTTP server on a free port; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_http_handler(stack.dispatcher))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
