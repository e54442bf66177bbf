"""A REST resolver that can serve several requests at once in one process.

Powertools keeps the request being resolved on the router itself (`BaseRouter.current_event`,
`lambda_context`, the resolver's `context` dict): fine in a Lambda execution environment, which
handles one event at a time, but the local server runs handlers on many threads. Here those
attributes are properties over a per-request state held in a ContextVar (each thread has its own
context), the shape Powertools' own HTTP resolver uses for ASGI. On Lambda it changes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

if TYPE_CHECKING:  # annotations only: the core holds no Powertools event types at run time
    from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent


@dataclass
class _RequestState:
    event: BaseProxyEvent | None = None
    lambda_context: Any = None
    context: dict[str, Any] = field(default_factory=dict)
    processed_stack_frames: list[str] = field(default_factory=list)


class ConcurrentRestResolver(APIGatewayRestResolver):
    """`APIGatewayRestResolver` whose per-request attributes belong to the calling thread."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Before super().__init__: it assigns `context` and `processed_stack_frames`.
        self._startup_state = _RequestState()
        self._request_state: ContextVar[_RequestState | None] = ContextVar("resolver_request", default=None)
        # A route builds its middleware stack on its first call, by mutating itself: the first
        # call of each route runs alone.
        self._first_calls_lock = threading.Lock()
        self._warm_routes: set[tuple[str, str]] = set()
        super().__init__(*args, **kwargs)

    @property
    def _state(self) -> _RequestState:
        return self._request_state.get() or self._startup_state

    @property  # type: ignore[override]
    def current_event(self) -> BaseProxyEvent:
        event = self._state.event
        return event if event is not None else super().current_event

    @current_event.setter
    def current_event(self, value: BaseProxyEvent) -> None:
        self._state.event = value

    @property
    def lambda_context(self) -> Any:
        return self._state.lambda_context

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        self._state.lambda_context = value

    @property
    def context(self) -> dict[str, Any]:
        return self._state.context

    @context.setter
    def context(self, value: dict[str, Any]) -> None:
        self._state.context = value

    @property
    def processed_stack_frames(self) -> list[str]:
        return self._state.processed_stack_frames

    @processed_stack_frames.setter
    def processed_stack_frames(self, value: list[str]) -> None:
        self._state.processed_stack_frames = value

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        # Fresh state for this request; the parent also sets the process-wide attributes, which
        # nothing here reads while the per-request state has its own.
        state = _RequestState(event=self._to_proxy_event(dict(event)), lambda_context=context)
        token = self._request_state.set(state)
        try:
            route = (str(event.get("httpMethod")), str(event.get("resource")))
            if route in self._warm_routes:
                return super().resolve(event, context)
            with self._first_calls_lock:
                answer = super().resolve(event, context)
                self._warm_routes.add(route)
                return answer
        finally:
            self._request_state.reset(token)
