"""The local server. `make run` starts it; each request goes through the route's lambda_handler."""

from __future__ import annotations

import errno
import importlib
import io
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
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
from memory_engine_app.server.sockets import LocalHttpServer, RequestReader, client_watch

__all__ = [
    "DEFAULT_READ_TIMEOUT_S",
    "DEFAULT_REQUEST_READ_S",
    "Dispatcher",
    "LocalHttpServer",
    "load_routes",
    "make_http_handler",
    "serve",
]

log = logging.getLogger("memory_engine.server")
MAX_BODY_BYTES = 6 * 1024 * 1024  # Lambda's synchronous payload limit
DEFAULT_READ_TIMEOUT_S = 30.0
DEFAULT_REQUEST_READ_S = 60.0
DEFAULT_DEADLINE_S = 28.0  # the API functions' Lambda timeout
# At SIGINT/SIGTERM: how long running requests and the worker's job get to stop (they are
# cancelled at once and stop at their next check).
STOP_GRACE_S = 5.0

# A response body: bytes, or the live chunks of a streamed one (server-sent events).
Body = bytes | Iterator[bytes]


def load_routes() -> list[RoutePattern]:
    from functions.routes import ROUTES

    return [RoutePattern.of(r.method, r.path, r.function, r.auth) for r in ROUTES]


class Dispatcher:
    """Finds the route, checks the key as the API Gateway authorizer would, applies the key's rate
    limit as a usage plan would, calls the handler. Serves the OpenAPI document without auth."""

    def __init__(
        self,
        routes: Sequence[RoutePattern],
        keys: KeyResolver,
        limiter: RateLimiter | None = None,
        deadline_s: float = DEFAULT_DEADLINE_S,
    ) -> None:
        self._routes = list(routes)
        self._keys = keys
        self._limiter = limiter
        self._deadline_s = deadline_s
        self._handlers: dict[str, Callable[[dict[str, Any], Any], dict[str, Any]]] = {}
        self._spec: bytes | None = None
        self._lock = threading.Lock()

    def handler(self, function: str) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
        with self._lock:
            if function not in self._handlers:
                module = importlib.import_module(f"functions.{function}.handler")
                self._handlers[function] = module.lambda_handler
            return self._handlers[function]

    def function_error_shape(self, function: str) -> ErrorShaper:
        """The error envelope of a route's dialect (its resolver's), for the answers this server
        gives before the handler runs: a game client reads `code`/`msg`, an OpenAI client `error`."""
        return error_shaper_of(importlib.import_module(f"functions.{function}.handler").app)

    def openapi(self) -> bytes:
        with self._lock:
            if self._spec is None:
                self._spec = json.dumps(build_spec(), ensure_ascii=False).encode()
            return self._spec

    def error_shape(self, path: str) -> ErrorShaper:
        """The error envelope of the route a path belongs to (game, OpenAI or native), for the
        answers the server gives before any handler runs."""
        for route in self._routes:
            if route.match(path) is not None:
                return self.function_error_shape(route.function)
        return native_error_body

    def error(
        self, path: str, status: int, message: str, headers: list[tuple[str, str]] | None = None
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """An error answer in the envelope of the path's route."""
        try:
            shape = self.error_shape(path)
        except Exception:  # a handler that cannot load: the native envelope still answers
            shape = native_error_body
        body = json.dumps(shape(status, message, []), ensure_ascii=False).encode()
        return status, [("Content-Type", "application/json"), *(headers or [])], body

    def dispatch(
        self,
        method: str,
        path: str,
        query: str,
        headers: dict[str, str],
        body: bytes,
        cancelled: Callable[[], bool] | None = None,
    ) -> tuple[int, list[tuple[str, str]], Body]:
        """Serve one request; `cancelled` says its client has gone (the handler's work stops at
        its next check, as it does past the request deadline)."""
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
                return _error(
                    405, message, [("Allow", allow)], self.function_error_shape(on_path[0][0].function)
                )
            return _error(404, f"No route {method} {path}.")
        route, params = chosen
        principal = None
        if route.auth:
            authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
            principal = authenticate(authorization, self._keys)
            if principal is None:
                message = "Missing or invalid API key: send 'Authorization: Bearer <key>'."
                challenge = [("WWW-Authenticate", 'Bearer realm="memory-engine"')]
                return _error(401, message, challenge, self.function_error_shape(route.function))
            wait = self._limiter.acquire(principal.key_id) if self._limiter else 0
            if wait:
                message = f"Too many requests for this API key: retry after {wait} s."
                return _error(
                    429, message, [("Retry-After", str(wait))], self.function_error_shape(route.function)
                )
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
                result = handler(event, LocalContext(self._deadline_s, cancelled))
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


def _refuse_framing(content_lengths: list[str], transfer_encoding: str | None) -> tuple[int, str] | None:
    """The status and message for a body this server will not read (too big, unframed, chunked,
    framed twice); else None."""
    if transfer_encoding:
        return 411, "Chunked bodies are not accepted: send a Content-Length."
    if len(content_lengths) > 1:
        # Two lengths are a request-smuggling vector: whichever one a proxy believed, refuse both.
        return 400, "Send one Content-Length header, not several."
    if not content_lengths or content_lengths[0].strip() == "":
        return None
    if not content_lengths[0].strip().isdigit():
        return 400, "Content-Length must be a non-negative whole number of bytes."
    if int(content_lengths[0]) > MAX_BODY_BYTES:
        return 413, f"Body over {MAX_BODY_BYTES} bytes: send less per request."
    return None


def _path_of(request_line: str) -> str:
    """The path of a request line, as far as it can be read ("" when it cannot)."""
    parts = request_line.split()
    return parts[1].partition("?")[0] if len(parts) >= 2 else ""


def make_http_handler(
    dispatcher: Dispatcher,
    read_timeout_s: float | None = DEFAULT_READ_TIMEOUT_S,
    request_read_s: float = DEFAULT_REQUEST_READ_S,
) -> type[BaseHTTPRequestHandler]:
    """The request handler class; `read_timeout_s` bounds every wait on the client's socket (a
    request line, headers or body that does not come, an idle keep-alive connection, a client
    that stops reading a stream), `request_read_s` the whole arrival of one request from its
    first byte: such a connection is closed and its thread freed. The server's own refusals
    (malformed request line, 414/431, unsupported methods, framing) answer in the JSON envelope
    of the path's route, never as an HTML page."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "memory-engine"
        timeout = read_timeout_s  # StreamRequestHandler sets it on the socket
        # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every keep-alive response.
        disable_nagle_algorithm = True
        server: LocalHttpServer

        def setup(self) -> None:
            super().setup()
            self._reader = RequestReader(self.connection, read_timeout_s, request_read_s)
            self.rfile = io.BufferedReader(self._reader)

        def handle_one_request(self) -> None:
            self._reader.next_request()
            super().handle_one_request()

        def _serve(self) -> None:
            path, _, query = self.path.partition("?")
            framing = (self.headers.get_all("Content-Length") or [], self.headers.get("Transfer-Encoding"))
            refused = _refuse_framing(*framing)
            if refused is not None:
                # The body was not read: the connection cannot carry another request.
                self._send(*dispatcher.error(path, *refused))
                self.close_connection = True
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = self.rfile.read(length) if length else b""
            except TimeoutError:
                self._send(*dispatcher.error(path, 408, "The request did not arrive in time: send it whole."))
                self.close_connection = True
                return
            if len(body) < length:  # the client closed before sending it all
                self.close_connection = True
                return
            self.connection.settimeout(read_timeout_s)  # the answer's writes: per write, not the read's rest
            headers = {name: value for name, value in self.headers.items()}
            watch = client_watch(self.connection, self.server.stopping)
            try:
                with self.server.busy():
                    answer = dispatcher.dispatch(self.command, path, query, headers, body, watch)
            except Exception as error:
                log.error("request failed", extra=error_details(error))
                answer = dispatcher.error(path, 500, "Internal error; the request may be retried.")
            if watch():
                self.close_connection = True  # nobody to answer (or the server is stopping)
                if not self.server.stopping.is_set():
                    return
            self._send(*answer)

        def _unsupported(self) -> None:
            path = self.path.partition("?")[0]
            message = f"{self.command} is not supported: this API answers GET, POST and DELETE."
            self._send(*dispatcher.error(path, 501, message, [("Allow", "GET, POST, DELETE")]))
            self.close_connection = True

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """http.server's own refusals (a malformed request line, a line or headers too long, an
            unknown method) in the JSON envelope of the path's route instead of its HTML page."""
            self.log_error("code %d, message %s", code, message)
            text = f"{message or HTTPStatus(code).phrase}: fix the request and send it again."
            self.close_connection = True
            # A request line too broken to name its version would get no status line (HTTP/0.9).
            self.request_version = self.protocol_version
            self._send(*dispatcher.error(_path_of(self.requestline), code, text, [("Connection", "close")]))

        def _send(self, status: int, headers: list[tuple[str, str]], body: Body) -> None:
            self.send_response(status)
            for name, value in headers:
                if name.lower() not in {"content-length", "transfer-encoding"}:
                    self.send_header(name, value)
            if isinstance(body, bytes):
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
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
        do_HEAD = do_OPTIONS = _unsupported

        def log_message(self, format: str, *args: Any) -> None:
            # The request line carries the query string, where a client may have put its key.
            log.info("%s - %s", self.address_string(), redact(format % args))

    return Handler


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


def serve(host: str = "127.0.0.1", port: int | None = None) -> None:
    """Run until SIGINT/SIGTERM; then stop taking requests, cancel the running ones and the
    worker's job (released for next time), and exit within a few seconds."""
    logging.basicConfig(level=get_settings().log_level, format="%(asctime)s %(name)s %(message)s")
    for root_handler in logging.getLogger().handlers:
        root_handler.addFilter(RedactingFilter())
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    settings = get_settings()
    dispatcher = Dispatcher(
        load_routes(),
        wiring.key_resolver(),
        RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst),
        settings.request_deadline_seconds,
    )
    handler = make_http_handler(
        dispatcher, settings.server_read_timeout_seconds, settings.server_request_read_seconds
    )
    # The port first: a busy one is said at once, before the index loads.
    server = bind(host, port or int(os.environ.get("PORT", "8080")), handler, settings.server_max_connections)
    key, created = local_api_key(settings.api_key, settings.data_dir)
    engine = wiring.engine()
    worker = wiring.local_worker(engine)

    def stop(signum: int, frame: FrameType | None) -> None:
        server.stopping.set()  # running requests and the worker's job see it at their next check
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
        server.stopping.set()
        server.server_close()
        idle = server.wait_idle(STOP_GRACE_S)
        stopped = worker.stop(STOP_GRACE_S)
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
