"""Every API invocation emits its route's metrics as one CloudWatch EMF line (Powertools Metrics):
Requests, ServerErrors and Latency under the `route` dimension, in the stack's namespace."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from functions.extraction_worker.handler import lambda_handler
from memory_engine.edge import observability
from memory_engine.edge.http import build_resolver, lambda_entry
from memory_engine.edge.observability import record_job, traced, tracer
from memory_engine.engine import Engine
from memory_engine.errors import Unavailable
from memory_engine_app.server.apigw import LocalContext
from tests.handlers.conftest import Invoke, load_event


def emf_lines(text: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    return [line for line in lines if "_aws" in line]


def test_a_request_emits_its_routes_count_latency_and_no_server_error(
    invoke: Invoke, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _ = invoke("retrieve")

    (line,) = emf_lines(capsys.readouterr().out)
    (directive,) = line["_aws"]["CloudWatchMetrics"]
    assert status == 200
    assert directive["Namespace"] == "MemoryEngine"
    assert ["route", "service"] in directive["Dimensions"]
    assert line["route"] == "POST /v1/engine/retrieve/"
    assert (line["Requests"], line["ServerErrors"]) == ([1.0], [0.0])
    assert line["Latency"][0] >= 0


def test_with_metrics_disabled_nothing_is_printed_however_many_requests(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the local server's setting (metrics off), When more requests than one EMF line holds
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    for _ in range(250):
        observability.record_request("POST /v1/engine/retrieve/", 200, 0.01)
    observability.record_job("extract", "done")

    # Then no metric line reaches stdout (Powertools flushes a full set of 100 values regardless)
    assert emf_lines(capsys.readouterr().out) == []


def test_requests_ending_together_on_threads_each_write_a_whole_line_of_their_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the local server's threads, metrics on (Powertools' `Metrics` shares one set per
    # process: concurrent requests took each other's values and one failed with a 500)
    routes = [f"GET /v1/route-{n}/" for n in range(8)]
    together = threading.Barrier(len(routes))

    def request(route: str) -> None:
        together.wait()
        for _ in range(25):
            observability.record_request(route, 200, 0.01)

    # When eight requests end at once, 25 times each
    threads = [threading.Thread(target=request, args=(route,)) for route in routes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # Then each wrote its own line, whole, with its own route and one count
    out = capsys.readouterr().out
    lines = emf_lines(out)
    assert len(lines) == len(out.splitlines()) == 200
    assert sorted(line["route"] for line in lines) == sorted(routes * 25)
    assert all(line["Requests"] == [1.0] and line["ServerErrors"] == [0.0] for line in lines)


def test_a_dependency_failure_counts_as_a_server_error_of_its_route(
    invoke: Invoke, engine: Engine, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(*args: object, **kwargs: object) -> None:
        raise Unavailable("DynamoDB is unavailable (test); retry.")

    monkeypatch.setattr(engine.store, "append_turn", down)

    status, _ = invoke("consolidate")

    (line,) = emf_lines(capsys.readouterr().out)
    assert status == 503
    assert line["route"] == "POST /v1/engine/consolidate/" and line["ServerErrors"] == [1.0]


def test_a_job_emits_its_kind_and_outcome_in_the_stacks_namespace(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MemoryEngineTest")

    record_job("extract", "done")

    (line,) = emf_lines(capsys.readouterr().out)
    assert line["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "MemoryEngineTest"
    assert (line["kind"], line["outcome"], line["Jobs"]) == ("extract", "done", [1.0])


class RecordingTracer:
    disabled = False

    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.traced: list[str] = []

    def capture_lambda_handler(self, handler: Any, **options: Any) -> Any:
        self.options = options

        def in_subsegment(event: dict[str, Any], context: Any) -> Any:
            self.traced.append(handler.__name__)
            return handler(event, context)

        return in_subsegment


def tracer_factory(recording: RecordingTracer, built: list[RecordingTracer]) -> Any:
    """In place of `observability.tracer`: the recording tracer, noting each time it is asked for."""

    def build() -> RecordingTracer:
        built.append(recording)
        return recording

    return build


def test_in_lambda_each_invocation_is_traced_without_its_response_or_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recording = RecordingTracer()
    built: list[RecordingTracer] = []
    monkeypatch.setattr(observability, "tracer", tracer_factory(recording, built))
    handler = lambda_entry(build_resolver())

    handler(load_event("health"), LocalContext())
    handler(load_event("health"), LocalContext())

    assert recording.traced == ["lambda_handler", "lambda_handler"]
    # Responses and error messages may quote the user's words: they stay out of X-Ray
    assert recording.options == {"capture_response": False, "capture_error": False}
    assert len(built) == 1  # the tracer is looked up once, on the first invocation


def test_the_tracer_is_built_on_the_first_invocation_not_when_a_handler_is_wrapped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[RecordingTracer] = []
    monkeypatch.setattr(observability, "tracer", tracer_factory(RecordingTracer(), built))

    handler = lambda_entry(build_resolver())

    assert built == []
    handler(load_event("health"), LocalContext())
    assert len(built) == 1


def test_outside_lambda_the_tracer_is_off_and_handlers_run_as_they_are() -> None:
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"event": event}

    wrapped = traced(handler)

    found = tracer()
    assert found is None or found.disabled
    assert wrapped({"a": 1}, None) == {"event": {"a": 1}}
    assert wrapped.__name__ == "handler"


def test_each_queue_job_is_counted_by_kind_and_outcome(
    invoke: Invoke, capsys: pytest.CaptureFixture[str]
) -> None:
    invoke("consolidate")
    capsys.readouterr()
    event = load_event("extraction_worker")
    poison = {**event["Records"][0], "messageId": "poison", "body": "not a job"}
    event["Records"].append(poison)

    lambda_handler(event, LocalContext())

    jobs = [(line["kind"], line["outcome"]) for line in emf_lines(capsys.readouterr().out) if "Jobs" in line]
    assert jobs == [("extract", "done"), ("unreadable", "failed")]
