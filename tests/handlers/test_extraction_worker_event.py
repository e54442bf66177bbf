"""The extraction worker's handler fed its sample SQS event from events/ (local backend)."""

from __future__ import annotations

from functions.extraction_worker.handler import lambda_handler
from functions.routes import ROUTES, WORKERS
from memory_engine.engine import Engine
from memory_engine_app.server.apigw import LocalContext
from tests.handlers.conftest import Invoke, load_event


def test_the_sample_event_runs_the_job_and_reports_no_failure(invoke: Invoke, engine: Engine) -> None:
    # Given the sample session with one buffered turn
    invoke("consolidate")

    # When the worker gets the sample job (below the threshold: nothing to extract yet)
    response = lambda_handler(load_event("extraction_worker"), LocalContext())

    # Then the record succeeded and the turn is still buffered
    assert response == {"batchItemFailures": []}
    assert len(engine.store.buffered_turns("tenant-a", "session-1")) == 1


def test_a_record_that_is_not_a_job_is_reported_failed_by_its_id() -> None:
    event = load_event("extraction_worker")
    event["Records"][0]["body"] = "not a job"

    response = lambda_handler(event, LocalContext())

    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}


def test_workers_are_listed_apart_from_the_http_routes() -> None:
    assert "extraction_worker" in WORKERS
    assert "extraction_worker" not in {route.function for route in ROUTES}
