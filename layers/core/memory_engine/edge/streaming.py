"""Server-sent events from a handler, streamed where the runtime can stream and buffered where not.

A Lambda behind API Gateway REST returns one finished response: there the handler reads the whole
event stream and answers it as one `text/event-stream` body. A runtime that can stream (the local
server; on AWS, the same server behind a Lambda function URL in RESPONSE_STREAM mode with the
Lambda Web Adapter) opens a sink around the call: the handler then hands over the live iterator,
and the runtime writes each event as it comes. The handler's code is the same either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from aws_lambda_powertools.event_handler import Response

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@dataclass
class StreamSink:
    """Where a handler leaves the event stream for the runtime to write out."""

    events: Iterator[bytes] | None = None


_sink: ContextVar[StreamSink | None] = ContextVar("memory_engine_stream_sink", default=None)


@contextmanager
def stream_sink() -> Iterator[StreamSink]:
    """Open around one handler call (in the calling thread) to receive its stream, if it has one."""
    sink = StreamSink()
    token = _sink.set(sink)
    try:
        yield sink
    finally:
        _sink.reset(token)


def sse_response(events: Iterator[bytes]) -> Response:
    """A `text/event-stream` response: handed to the runtime's sink when one is open, else read
    to the end and returned whole."""
    sink = _sink.get()
    if sink is not None:
        sink.events = events
        return Response(status_code=200, content_type="text/event-stream", body="", headers=SSE_HEADERS)
    body = b"".join(events).decode("utf-8")
    return Response(status_code=200, content_type="text/event-stream", body=body, headers=SSE_HEADERS)
