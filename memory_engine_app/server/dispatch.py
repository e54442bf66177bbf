"""The local server's dispatcher: a request's route, key and rate checked as API Gateway would,
then the route's own `lambda_handler` called with the proxy event."""

from __future__ import annotations

import importlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from memory_engine.edge.auth import KeyResolver, authenticate
from memory_engine.edge.http import ErrorShaper, error_shaper_of, native_error_body
from memory_engine.edge.logsafe import error_details
from memory_engine.edge.ratelimit import RateLimiter
from memory_engine.edge.streaming import stream_sink
from memory_engine_app.server.apigw import LocalContext, RoutePattern, proxy_event, response_parts
from memory_engine_app.server.inspector_assets import inspector_asset
from memory_engine_app.server.openapi import OPENAPI_PATH, build_spec

log = logging.getLogger("memory_engine.server")
DEFAULT_DEADLINE_S = 28.0  # the API functions' Lambda timeout

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
