"""The local server. `make run` starts it; each request goes through the route's lambda_handler."""

from __future__ import annotations

import importlib
import json
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any

from memory_engine import wiring
from memory_engine.auth import KeyResolver, authenticate, local_api_key
from memory_engine.http import ErrorShaper, error_shaper_of, native_error_body
from memory_engine.logsafe import RedactingFilter, error_details, redact
from memory_engine.ratelimit import RateLimiter
from memory_engine.settings import get_settings
from memory_engine.streaming import stream_sink
from memory_engine_app.data_dir import mark_served
from memory_engine_app.server.apigw import LocalContext, RoutePattern, proxy_event, response_parts
from memory_engine_app.server.banner import banner
from memory_engine_app.server.inspector_assets import inspector_asset
from memory_engine_app.server.openapi import OPENAPI_PATH, build_spec

log = logging.getLogger("memory_engine.server")
MAX_BODY_BYTES = 6 * 1024 * 1024  # Lambda's synchronous payload limit
DEFAULT_READ_TIMEOUT_S = 30.0

# A response body: bytes, or the live chunks of a streamed one (server-sent events).
Body = bytes | Iterator[bytes]


def load_routes() -> list[RoutePattern]:
    from functions.routes import ROUTES

    return [RoutePattern.of(r.method, r.path, r.function, r.auth) for r in ROUTES]


class Dispatcher:
    """Finds the route, checks the key as the API Gateway authorizer would, applies the key's rate
    limit as a usage plan would, calls the handler. Serves the OpenAPI document without auth."""

    def __init__(
        self, routes: Sequence[RoutePattern], keys: KeyResolver, limiter: RateLimiter | None = None
    ) -> None:
        self._routes = list(routes)
        self._keys = keys
        self._limiter = limiter
        self._handlers: dict[str, Callable[[dict[str, Any], Any], dict[str, Any]]] = {}
        self._spec: bytes | None = None
        self._lock = threading.Lock()

    def handler(self, function: str) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
        with self._lock:
            if function not in self._handlers:
                module = importlib.import_module(f"functions.{function}.handler")
                self._handlers[function] = module.lambda_handler
            return self._handlers[function]

    def error_shape(self, function: str) -> ErrorShaper:
        """The error envelope of a route's dialect (its resolver's), for the answers this server
        gives before the handler runs: a game client reads `code`/`msg`, an OpenAI client `error`."""
        return error_shaper_of(importlib.import_module(f"functions.{function}.handler").app)

    def openapi(self) -> bytes:
        with self._lock:
            if self._spec is None:
                self._spec = json.dumps(build_spec(), ensure_ascii=False).encode()
            return self._spec

    def dispatch(
        self, method: str, path: str, query: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], Body]:
        if method == "GET" and path.rstrip("/") == OPENAPI_PATH:
            return 200, [("Content-Type", "application/json")], self.openapi()
        if method == "GET" and (page := inspector_asset(path)) is not None:
            return page  # the inspector's static page: no key needed to load it, only to use it
        matches = [(route, route.match(path)) for route in self._routes]
        on_path = [(route, params) for route, params in matches if params is not None]
        chosen = next(((r, p) for r, p in on_path if r.method == method), None)
        if chosen is None:
            if on_path:
                allow = ", ".join(sorted({route.method for route, _ in on_path}))
                message = f"{method} is not allowed on {path}: use {allow}."
                return _error(405, message, [("Allow", allow)], self.error_shape(on_path[0][0].function))
            return _error(404, f"No route {method} {path}.")
        route, params = chosen
        principal = None
        if route.auth:
            authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
            principal = authenticate(authorization, self._keys)
            if principal is None:
                message = "Missing or invalid API key: send 'Authorization: Bearer <key>'."
                challenge = [("WWW-Authenticate", 'Bearer realm="memory-engine"')]
                return _error(401, message, challenge, self.error_shape(route.function))
            wait = self._limiter.acquire(principal.key_id) if self._limiter else 0
            if wait:
                message = f"Too many requests for this API key: retry after {wait} s."
                return _error(429, message, [("Retry-After", str(wait))], self.error_shape(route.function))
        event = proxy_event(
            method,
            path,
            query,
            headers,
            body,
            route,
            params or {},
            principal.tenant if principal else None,
            key_id=principal.key_id if principal else None,
        )
        handler = self.handler(route.function)
        try:
            # The same lambda_handler, called on this request's thread while others run theirs
            # (the resolver keeps each request's event to its thread; the adapters lock their own
            # state). A handler that streams leaves its events in the sink, written out afterwards.
            with stream_sink() as sink:
                result = handler(event, LocalContext())
        except Exception as error:  # the handler's own mapping failed: still no trace on the wire
            log.error("handler failed", extra={"function": route.function, **error_details(error)})
            return _error(500, "Internal error; the request may be retried.")
        status, response_headers, payload = response_parts(result)
        return status, response_headers, sink.events if sink.events is not None else payload


def _error(
    status: int,
    message: str,
    headers: list[tuple[str, str]] | None = None,
    shape: ErrorShaper = native_error_body,
) -> tuple[int, list[tuple[str, str]], bytes]:
    body = json.dumps(shape(status, message, []), ensure_ascii=False).encode()
    return status, [("Content-Type", "application/json"), *(headers or [])], body


def _refuse_framing(
    content_length: str | None, transfer_encoding: str | None
) -> tuple[int, list[tuple[str, str]], bytes] | None:
    """The answer for a body this server will not read (too big, unframed, chunked); else None."""
    if transfer_encoding:
        return _error(411, "Chunked bodies are not accepted: send a Content-Length.")
    if content_length is None or content_length.strip() == "":
        return None
    if not content_length.strip().isdigit():
        return _error(400, "Content-Length must be a non-negative whole number of bytes.")
    if int(content_length) > MAX_BODY_BYTES:
        return _error(413, f"Body over {MAX_BODY_BYTES} bytes: send less per request.")
    return None


def make_http_handler(
    dispatcher: Dispatcher, read_timeout_s: float | None = DEFAULT_READ_TIMEOUT_S
) -> type[BaseHTTPRequestHandler]:
    """The request handler class; `read_timeout_s` bounds every wait on the client's socket (a
    request line, headers or body that does not come, an idle keep-alive connection, a client
    that stops reading a stream): such a connection is closed and its thread freed."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "memory-engine"
        timeout = read_timeout_s  # StreamRequestHandler sets it on the socket
        # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every keep-alive response.
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            path, _, query = self.path.partition("?")
            framing = (self.headers.get("Content-Length"), self.headers.get("Transfer-Encoding"))
            refused = _refuse_framing(*framing)
            if refused is not None:
                # The body was not read: the connection cannot carry another request.
                self._send(*refused)
                self.close_connection = True
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = self.rfile.read(length) if length else b""
            except TimeoutError:
                self._send(*_error(408, "The request body did not arrive in time: send it whole."))
                self.close_connection = True
                return
            if len(body) < length:  # the client closed before sending it all
                self.close_connection = True
                return
            headers = {name: value for name, value in self.headers.items()}
            try:
                answer = dispatcher.dispatch(self.command, path, query, headers, body)
            except Exception as error:
                log.error("request failed", extra=error_details(error))
                answer = _error(500, "Internal error; the request may be retried.")
            self._send(*answer)

        def _send(self, status: int, headers: list[tuple[str, str]], body: Body) -> None:
            self.send_response(status)
            for name, value in headers:
                if name.lower() not in {"content-length", "transfer-encoding"}:
                    self.send_header(name, value)
            if isinstance(body, bytes):
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._stream(body)

        def _stream(self, chunks: Iterator[bytes]) -> None:
            """HTTP/1.1 chunked transfer, one chunk per event, flushed as it comes."""
            try:
                for chunk in chunks:
                    if chunk:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                # The client left, or stopped reading; the generator is closed below.
                self.close_connection = True
            finally:
                close = getattr(chunks, "close", None)
                if callable(close):
                    close()

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            # The request line carries the query string, where a client may have put its key.
            log.info("%s - %s", self.address_string(), redact(format % args))

    return Handler


class LocalHttpServer(ThreadingHTTPServer):
    """One thread per connection, so no request waits on another's network calls."""

    daemon_threads = True
    # Connections waiting to be accepted (socketserver's default is 5): a burst of clients gets
    # queued by the kernel instead of refused.
    request_queue_size = 128


def serve(host: str = "127.0.0.1", port: int | None = None) -> None:
    """Run until SIGINT/SIGTERM; then stop taking requests and let the worker finish its job."""
    logging.basicConfig(level=get_settings().log_level, format="%(asctime)s %(name)s %(message)s")
    for root_handler in logging.getLogger().handlers:
        root_handler.addFilter(RedactingFilter())
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    settings = get_settings()
    key, created = local_api_key(settings.api_key, settings.data_dir)
    engine = wiring.engine()
    worker = wiring.local_worker(engine)
    dispatcher = Dispatcher(
        load_routes(),
        wiring.key_resolver(),
        RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst),
    )
    server = LocalHttpServer(
        (host, port or int(os.environ.get("PORT", "8080"))),
        make_http_handler(dispatcher, settings.server_read_timeout_seconds),
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    worker.start()
    # Load the model now, not on the first retrieve.
    threading.Thread(target=lambda: engine.embedder.embed(["warm up"]), daemon=True).start()
    bound_host, bound_port = server.server_address[:2]
    url = f"http://{bound_host!s}:{bound_port}"
    mark_served(settings, url)
    for line in banner(url, settings, key, created):
        print(line, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        worker.stop()
        close_index = getattr(engine.index, "close", None)  # the persisted local index: checkpoint
        if callable(close_index):
            close_index()
        print("memory-engine stopped", flush=True)
