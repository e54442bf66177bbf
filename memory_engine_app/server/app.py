"""The local server. `make run` starts it: the dispatcher (`dispatch.py`) behind the HTTP handler
(`http_handler.py`) on a bounded threading server (`sockets.py`), the local engine and its worker
beside them; each request goes through the route's lambda_handler."""

from __future__ import annotations

import errno
import logging
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler
from types import FrameType

from memory_engine.composition import key_wiring
from memory_engine.edge.auth import local_api_key
from memory_engine.edge.logsafe import RedactingFilter, error_details
from memory_engine.edge.ratelimit import RateLimiter
from memory_engine.engine import Engine
from memory_engine.settings import get_settings
from memory_engine_app import local_engine
from memory_engine_app.data_dir import mark_served
from memory_engine_app.server.banner import banner, key_line
from memory_engine_app.server.dispatch import Dispatcher, load_routes
from memory_engine_app.server.http_handler import make_http_handler
from memory_engine_app.server.sockets import LocalHttpServer

log = logging.getLogger("memory_engine.server")
# At SIGINT/SIGTERM: how long running requests and the worker's job get to stop (they are
# cancelled at once and stop at their next check).
STOP_GRACE_S = 5.0


def bind(
    host: str, port: int, handler: type[BaseHTTPRequestHandler], max_connections: int
) -> LocalHttpServer:
    """The listening server; a port that cannot be had is one line on stderr and exit status 1."""
    try:
        return LocalHttpServer((host, port), handler, max_connections)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            why = f"port {port} on {host} is already in use: stop what holds it, or set PORT to another"
        else:
            why = f"cannot listen on {host}:{port}: {error.strerror or error}"
        print(f"memory-engine: {why}.", file=sys.stderr, flush=True)
        raise SystemExit(1) from None


def share_the_interpreter(interval_ms: float) -> None:
    """Let a thread waiting for the interpreter have it after `interval_ms` instead of Python's
    5 ms. Requests, the worker and the turn embedder share one interpreter: a short retrieve
    gives it up at every SQLite, index and model call and waits to get it back while another
    thread runs Python (a heavy tenant's retrieve, the worker's extraction), so at 5 ms a 15 ms
    retrieve took 40-200 ms beside a heavy neighbour (docs/research/speed.md, issue 42)."""
    sys.setswitchinterval(interval_ms / 1000)


def load_models(*engines: Engine) -> None:
    """Load each engine's embedding model (the requests' and the worker's copy) now, before the
    server takes a request: loading holds the interpreter (the tokenizer's construction is about
    a second of CPU, the ONNX session more on a first start), so a request that came in meanwhile
    waited for it; on a saturated host past a client's 30 s (issue 42). A model that cannot load
    is logged and tried again by the first call that needs it: the routes without it still serve."""
    loaded: set[int] = set()
    for built in engines:
        if id(built.embedder) in loaded:
            continue
        loaded.add(id(built.embedder))
        try:
            built.embedder.embed(["warm up"])
        except Exception as error:  # a start never fails on the model alone
            log.warning("could not load the embedding model", extra=error_details(error))


def serve(host: str = "127.0.0.1", port: int | None = None) -> None:
    """Run until SIGINT/SIGTERM; then stop taking requests, cancel the running ones and the
    worker's job (released for next time), and exit within a few seconds."""
    settings = get_settings()
    share_the_interpreter(settings.server_switch_interval_ms)  # before any thread starts
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(name)s %(message)s")
    for root_handler in logging.getLogger().handlers:
        root_handler.addFilter(RedactingFilter())
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    # The key before the key resolver: whoever makes it says so, and the resolver would make it
    # silently (the banner then had no new key to print).
    key, created = local_api_key(settings.api_key, settings.data_dir)
    dispatcher = Dispatcher(
        load_routes(),
        key_wiring.key_resolver(),
        RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst),
        settings.request_deadline_seconds,
    )
    handler = make_http_handler(
        dispatcher, settings.server_read_timeout_seconds, settings.server_request_read_seconds
    )
    # The port first: a busy one is said at once, before the index loads.
    try:
        server = bind(
            host, port or int(os.environ.get("PORT", "8080")), handler, settings.server_max_connections
        )
    except SystemExit:
        if created:  # made now and never shown otherwise
            print(key_line(settings, key, created), file=sys.stderr, flush=True)
        raise
    engine = local_engine.engine()
    working = local_engine.worker_engine(engine)
    worker = local_engine.local_worker(engine, working=working)
    arrivals = local_engine.turn_embedder(engine, working)

    def stop(signum: int, frame: FrameType | None) -> None:
        server.stopping.set()  # running requests and the worker's job see it at their next check
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print("memory-engine: loading the embedding model…", flush=True)
    load_models(engine, working)
    worker.start()
    arrivals.start()
    bound_host, bound_port = server.server_address[:2]
    url = f"http://{bound_host!s}:{bound_port}"
    mark_served(settings, url)
    for line in banner(url, settings, key, created):
        print(line, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.stopping.set()
        server.server_close()
        idle = server.wait_idle(STOP_GRACE_S)
        stopped = worker.stop(STOP_GRACE_S)
        stopped = arrivals.stop(STOP_GRACE_S) and stopped
        if not (idle and stopped):
            # A thread still inside the model would abort the interpreter's own exit (status 134):
            # leave now. The index is not checkpointed (the next start checks it against the
            # store) and a job still in hand is released by the next start's worker.
            log.warning(
                "stopped with work still running (requests idle: %s, worker stopped: %s)", idle, stopped
            )
            print("memory-engine stopped", flush=True)
            logging.shutdown()
            os._exit(0)
        close_index = getattr(engine.index, "close", None)  # the persisted local index: checkpoint
        if callable(close_index):
            close_index()
        print("memory-engine stopped", flush=True)
