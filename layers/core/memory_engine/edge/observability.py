"""Metrics and traces of the Lambda functions: Powertools Metrics (CloudWatch's embedded metric
format, EMF) and Tracer (X-Ray).

EMF metrics are log lines: no API call and no latency on the request path. Per API request
(`lambda_entry`): `Requests`, `ServerErrors` (5xx) and `Latency` (ms), dimension `route`
("POST /v1/engine/retrieve/"), one line written as the request ends. Per queue job: `Jobs`,
dimensions `kind` and `outcome`. The namespace is POWERTOOLS_METRICS_NAMESPACE (the stack sets
it), else `MemoryEngine`; the local server and the benchmarks turn metrics off with
POWERTOOLS_METRICS_DISABLED. Traces: each handler's invocation and its AWS SDK calls, in Lambda
only (the stack turns active tracing on).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, TypeVar, cast

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit, single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from memory_engine.models.messages import parse_job

Handler = TypeVar("Handler", bound=Callable[..., Any])
NAMESPACE = "MemoryEngine"
SERVICE = "memory-engine"
# One metric line written at a time: the local server's requests end on threads of their own.
_WRITING = threading.Lock()


def namespace() -> str:
    return os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or NAMESPACE


def route_of(event: dict[str, Any]) -> str:
    """The route as API Gateway names it: method and resource template, never the raw path (ids
    in a path would make one metric per id)."""
    return f"{event.get('httpMethod') or '-'} {event.get('resource') or '-'}"


def record_request(route: str, status: int, seconds: float) -> None:
    """One API request: counted, timed, and whether it failed on the engine's side (5xx)."""
    if is_metrics_disabled():
        # Not even kept: Powertools prints a metric set that reaches 100 values whether metrics
        # are disabled or not, so the local server's stdout got an EMF line every 100 requests.
        return
    # A metric set of this request's own, written at once: Powertools' `Metrics` keeps one set per
    # process (class state), which the local server's concurrent requests would share: one
    # request's flush then took another's values or found its set emptied, and the handler
    # failed with a 500 (tests/hardening/test_held_connections.py, 100 keep-alive connections).
    recorder = EphemeralMetrics(namespace=namespace(), service=SERVICE)
    recorder.add_dimension(name="route", value=route)
    recorder.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
    recorder.add_metric(name="ServerErrors", unit=MetricUnit.Count, value=1 if status >= 500 else 0)
    recorder.add_metric(name="Latency", unit=MetricUnit.Milliseconds, value=round(seconds * 1000, 3))
    line = json.dumps(recorder.serialize_metric_set(), separators=(",", ":")) + "\n"
    with _WRITING:  # one write per line: print's text and newline are two, and lines interleaved
        sys.stdout.write(line)
        sys.stdout.flush()


def record_job(kind: str, outcome: str) -> None:
    """One queue job (extract, chat_memory, forget_user) and how it ended: its own metric line,
    since one batch of records holds jobs of several kinds and outcomes."""
    if is_metrics_disabled():
        return
    with single_metric(
        name="Jobs", unit=MetricUnit.Count, value=1, namespace=namespace(), default_dimensions={}
    ) as metric:
        metric.add_dimension(name="kind", value=kind)
        metric.add_dimension(name="outcome", value=outcome)


def record_jobs(event: dict[str, Any], response: dict[str, Any]) -> None:
    """One `Jobs` metric per record of a worker batch, by kind: done, or failed (delivered again,
    parked at last); `response` is the batch processor's answer naming the failed records."""
    failed = {item["itemIdentifier"] for item in response.get("batchItemFailures", [])}
    for record in event.get("Records", []):
        outcome = "failed" if record.get("messageId") in failed else "done"
        record_job(_job_kind(record.get("body", "")), outcome)


def _job_kind(body: str) -> str:
    try:
        return parse_job(body).kind
    except ValueError:  # not a job (JSON or validation error): the DLQ will hold it
        return "unreadable"


@lru_cache(maxsize=1)
def tracer() -> Tracer | None:
    """The X-Ray tracer, or None where X-Ray's SDK is not installed (a local install without the
    `aws` extra; the Lambda layer has it). Powertools disables it outside Lambda by itself.

    No auto-patching: it would import botocore, requests and more into functions that never use
    them; the AWS adapters patch botocore when they build their first client (`trace_aws_calls`).
    """
    try:
        import aws_xray_sdk  # noqa: F401
    except ImportError:
        return None
    return Tracer(service=SERVICE, auto_patch=False)


def traced(handler: Handler) -> Handler:
    """`handler` in an X-Ray subsegment, where tracing is on. Neither the response nor an error
    is recorded in the trace: both may quote what the user said.

    The tracer is built on the first invocation, never at import: building it imports X-Ray's
    SDK and botocore's session machinery, which doubled every handler's cold import. Whether
    tracing is on is Powertools' own decision (`Tracer.disabled`: POWERTOOLS_TRACE_DISABLED, off
    outside Lambda), taken then; once taken, every later invocation goes straight to its target.
    """
    target: list[Callable[..., Any]] = []

    @wraps(handler)
    def invoke(*args: Any, **kwargs: Any) -> Any:
        if not target:
            target.append(_with_tracer(handler))
        return target[0](*args, **kwargs)

    return cast(Handler, invoke)


def _with_tracer(handler: Handler) -> Handler:
    found = tracer()
    if found is None or found.disabled:
        return handler
    return cast(Handler, found.capture_lambda_handler(handler, capture_response=False, capture_error=False))


def trace_aws_calls() -> None:
    """Trace every AWS SDK call (a subsegment per call) where tracing is on."""
    found = tracer()
    if found is not None and not found.disabled:
        found.patch(["botocore"])
