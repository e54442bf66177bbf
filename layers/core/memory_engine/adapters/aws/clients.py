"""boto3 clients, built on first use and shared by the process; AWS failures as domain errors."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memory_engine.edge.logsafe import debug_enabled, redact
from memory_engine.errors import Unavailable

log = logging.getLogger("memory_engine.aws")
_lock = threading.Lock()
_clients: dict[tuple[str, str | None], Any] = {}

# Error codes that mean "AWS cannot serve this now": the request may be retried later.
TRANSIENT_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "Throttling",
        "RequestLimitExceeded",
        "InternalServerError",
        "InternalFailure",
        "ServiceUnavailable",
        "TooManyRequestsException",
        "LimitExceededException",
        "RequestThrottled",
        "KMSThrottlingException",
        "AWS.SimpleQueueService.RequestThrottled",
    }
)


def client(service: str, region: str | None = None) -> Any:
    """A shared client for `service` (boto3 clients are thread-safe; their creation is not)."""
    key = (service, region)
    found = _clients.get(key)
    if found is not None:
        return found
    with _lock:
        if key not in _clients:
            import boto3
            from botocore.config import Config

            from memory_engine.edge.observability import trace_aws_calls

            trace_aws_calls()

            # Standard retries back off on throttling and 5xx; timeouts stay well inside Lambda's.
            config = Config(
                retries={"mode": "standard", "max_attempts": 5},
                connect_timeout=3,
                read_timeout=20,
                tcp_keepalive=True,
            )
            _clients[key] = boto3.session.Session().client(service, region_name=region, config=config)
        return _clients[key]


def forget_clients() -> None:
    """Drop the cached clients (tests that start a fresh moto mock)."""
    with _lock:
        _clients.clear()


def error_code(error: BaseException) -> str:
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


@contextmanager
def aws_errors(what: str, missing_hint: str = "", resource: str = "") -> Iterator[None]:
    """Turn throttling, 5xx, network failures and a missing resource into `Unavailable`.

    `what` names the dependency in the message, which reaches API callers in a 503: never a table
    name, queue URL, account id or exception text there. `resource` (the name or URL) and the
    failure's own text go to the log instead, for the operator. Anything else (a validation
    error: a bug) propagates as it is.
    """
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as error:
        code = error_code(error)
        if code in TRANSIENT_CODES:
            message = f"{what} is busy or unavailable ({code}); retry shortly."
        elif code in {
            "ResourceNotFoundException",
            "AWS.SimpleQueueService.NonExistentQueue",
            "QueueDoesNotExist",
        }:
            message = f"{what} does not exist ({code}). {missing_hint}".strip()
        elif code in {"AccessDeniedException", "AccessDenied", "UnrecognizedClientException"}:
            message = f"{what} refused this function's credentials ({code}); check its IAM role."
        else:
            raise
        raise unavailable(message, resource, error) from error
    except BotoCoreError as error:  # connection refused, timeouts, no credentials
        message = f"{what} could not be reached ({type(error).__name__}); retry shortly."
        raise unavailable(message, resource, error) from error


def unavailable(message: str, resource: str, detail: object, safe_detail: str | None = None) -> Unavailable:
    """An `Unavailable` whose `message` (for the caller) names no resource; the resource and the
    failure's own text (`detail`: an exception, an error body) go to the log for the operator.

    A `detail` that may quote user input (an OpenSearch error reason, a function's error body) comes
    with a `safe_detail` (its type or code), logged instead unless MEMORY_ENGINE_LOG_LEVEL=DEBUG:
    logs carry no dialogue text (logsafe).
    """
    shown = str(detail) if safe_detail is None or debug_enabled() else safe_detail
    log.warning("AWS dependency unavailable", extra={"resource": resource, "error": redact(shown)})
    return Unavailable(message)
