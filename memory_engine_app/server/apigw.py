"""Translate between plain HTTP and API Gateway REST proxy events (what Lambda receives)."""

from __future__ import annotations

import base64
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from memory_engine.edge.auth import Principal


class LocalContext:
    """The parts of a Lambda context that handlers and Powertools read: the time left counts down
    from `seconds` (the local server's request deadline, as a function's timeout would), and
    `cancelled()` says the client has gone or the server is stopping (`memory_engine.deadline`)."""

    function_name = "memory-engine-local"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:local:000000000000:function:memory-engine-local"
    memory_limit_in_mb = 1024
    aws_request_id = "local"
    log_group_name = "local"
    log_stream_name = "local"

    def __init__(self, seconds: float = 30.0, cancelled: Callable[[], bool] | None = None) -> None:
        self._ends = time.monotonic() + seconds
        self._cancelled = cancelled

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._ends - time.monotonic()) * 1000))

    def cancelled(self) -> bool:
        return self._cancelled is not None and self._cancelled()


@dataclass(frozen=True)
class RoutePattern:
    method: str
    resource: str  # as API Gateway names it, e.g. /v1/memories/{id}
    function: str
    auth: bool
    regex: re.Pattern[str]

    @classmethod
    def of(cls, method: str, resource: str, function: str, auth: bool) -> RoutePattern:
        pattern = re.escape(resource.rstrip("/"))
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", pattern)
        return cls(method, resource, function, auth, re.compile(f"^{pattern}/?$"))

    def match(self, path: str) -> dict[str, str] | None:
        found = self.regex.match(path)
        return found.groupdict() if found else None


def proxy_event(
    method: str,
    path: str,
    query: str,
    headers: dict[str, str],
    body: bytes,
    route: RoutePattern,
    path_parameters: dict[str, str],
    tenant: str | None,
    key_id: str | None = None,
) -> dict[str, Any]:
    """A REST API (v1) proxy event as API Gateway would send it, authorizer context included."""
    try:
        text, is_base64 = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, is_base64 = base64.b64encode(body).decode(), True
    parsed = parse_qs(query, keep_blank_values=True)
    now = datetime.now(UTC)
    authorizer = Principal(tenant, key_id or tenant).context() if tenant else None
    return {
        "resource": route.resource,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "queryStringParameters": {name: values[-1] for name, values in parsed.items()} or None,
        "multiValueQueryStringParameters": parsed or None,
        "pathParameters": path_parameters or None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": route.resource,
            "httpMethod": method,
            "path": path,
            "stage": "local",
            "requestId": str(uuid.uuid4()),
            "requestTimeEpoch": int(now.timestamp() * 1000),
            "identity": {"sourceIp": "127.0.0.1"},
            "authorizer": authorizer,
        },
        "body": text if body else None,
        "isBase64Encoded": is_base64,
    }


def response_parts(result: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, headers and body bytes from a Lambda proxy response."""
    status = int(result.get("statusCode", 500))
    headers: list[tuple[str, str]] = []
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers.extend((name, str(value)) for value in values)
    for name, value in (result.get("headers") or {}).items():
        headers.append((name, str(value)))
    body = result.get("body") or ""
    raw = base64.b64decode(body) if result.get("isBase64Encoded") else str(body).encode("utf-8")
    return status, headers, raw
