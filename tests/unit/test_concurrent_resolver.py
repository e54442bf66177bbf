"""The resolver keeps each request's event to the thread that resolves it."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel

from memory_engine.edge.http import build_resolver
from memory_engine_app.server.apigw import LocalContext, RoutePattern, proxy_event

ROUTE = RoutePattern.of("POST", "/echo", "echo", auth=False)


class Echo(BaseModel):
    name: str


def event(name: str) -> dict[str, Any]:
    body = json.dumps({"name": name}).encode()
    return proxy_event("POST", "/echo", "", {"Content-Type": "application/json"}, body, ROUTE, {}, None)


def test_a_request_paused_mid_handler_still_reads_its_own_event_after_another_ran() -> None:
    # Given a route that reads the current event before and after a pause
    app = build_resolver()
    first_inside, second_done = threading.Event(), threading.Event()

    @app.post("/echo")
    def echo(body: Echo) -> dict[str, Any]:
        before = app.current_event.json_body["name"]
        if body.name == "first":
            first_inside.set()
            second_done.wait(10)
        return {"body": body.name, "before": before, "after": app.current_event.json_body["name"]}

    app.resolve(event("warm-up"), LocalContext())  # the route's first call builds its middleware
    # When a second request is resolved while the first one is paused inside the handler
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(app.resolve, event("first"), LocalContext())
        assert first_inside.wait(10)
        second = app.resolve(event("second"), LocalContext())
        second_done.set()
        answers = [json.loads(first.result()["body"]), json.loads(second["body"])]
    # Then each saw only its own event throughout
    assert answers == [
        {"body": "first", "before": "first", "after": "first"},
        {"body": "second", "before": "second", "after": "second"},
    ]
