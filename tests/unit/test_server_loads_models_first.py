"""The local server loads its embedding models (the requests' and the worker's copy) before it
takes a request: a request that came in while a model loaded waited for it, on a saturated host
past a client's 30 s (issue 42)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest

from memory_engine.engine import Engine
from memory_engine.settings import reset_settings
from memory_engine_app import local_engine
from memory_engine_app.server import app


@dataclass
class Model:
    """An embedder that records the texts it embedded, or fails to load."""

    fails: bool = False
    calls: list[list[str]] = field(default_factory=list)

    def embed(self, texts: list[str]) -> list[list[float]]:
        if self.fails:
            raise RuntimeError("no model here")
        self.calls.append(texts)
        return [[0.0] for _ in texts]


@dataclass
class Built:
    embedder: Model
    index: object = field(default_factory=object)


def engines(*models: Model) -> list[Engine]:
    return [cast(Engine, Built(model)) for model in models]


def test_each_engines_model_is_loaded_once() -> None:
    requests, worker = Model(), Model()
    request_engine, worker_engine = engines(requests, worker)

    app.load_models(request_engine, worker_engine, request_engine)

    assert len(requests.calls) == 1
    assert len(worker.calls) == 1


def test_a_model_that_cannot_load_is_logged_and_the_start_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken, worker = Model(fails=True), Model()

    with caplog.at_level(logging.WARNING, logger="memory_engine.server"):
        app.load_models(*engines(broken, worker))

    assert "could not load the embedding model" in caplog.text
    assert len(worker.calls) == 1  # the next model still loads


class Worker:
    def __init__(self, events: list[str], name: str) -> None:
        self.events, self.name = events, name

    def start(self) -> None:
        self.events.append(f"{self.name} started")

    def stop(self, grace: float) -> bool:
        return True


class Server:
    """Stands in for the bound socket server: `serve_forever` is where requests would be taken."""

    server_address = ("127.0.0.1", 1)

    def __init__(self, events: list[str], models: list[Model]) -> None:
        self.events, self.models = events, models
        self.stopping = threading.Event()

    def serve_forever(self, poll_interval: float) -> None:
        loaded = all(model.calls for model in self.models)
        self.events.append(f"serving (models loaded: {loaded})")

    def server_close(self) -> None:
        pass

    def wait_idle(self, grace: float) -> bool:
        return True


@dataclass
class Started:
    events: list[str]
    requests: Model
    worker: Model
    out: str = ""


@pytest.fixture
def started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Iterator[Started]:
    """A server whose engine and worker each hold their own model, started and run to its end
    (the socket server stands in: it returns from `serve_forever` at once)."""
    monkeypatch.setenv("MEMORY_ENGINE_DATA_DIR", str(tmp_path))
    # serve() turns metrics off for the process (setdefault): set here, so it is undone after the
    # test, or every later test of the run would find metrics off (tests/handlers/test_metrics.py).
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setattr(app, "share_the_interpreter", lambda *_: None)
    reset_settings()
    run = Started([], Model(), Model())
    request_engine, worker_engine = engines(run.requests, run.worker)
    monkeypatch.setattr(app, "bind", lambda *_: Server(run.events, [run.requests, run.worker]))
    monkeypatch.setattr(local_engine, "engine", lambda: request_engine)
    monkeypatch.setattr(local_engine, "worker_engine", lambda _: worker_engine)
    monkeypatch.setattr(local_engine, "local_worker", lambda *_, **__: Worker(run.events, "worker"))
    monkeypatch.setattr(local_engine, "turn_embedder", lambda *_: Worker(run.events, "arrivals"))
    monkeypatch.setattr(app, "mark_served", lambda *_: None)
    monkeypatch.setattr(app.signal, "signal", lambda *_: None)
    monkeypatch.setattr(logging, "basicConfig", lambda *_, **__: None)
    try:
        app.serve(port=1)
        run.out = capsys.readouterr().out
        yield run
    finally:
        reset_settings()


def test_the_server_takes_no_request_before_both_models_are_loaded(started: Started) -> None:
    # Then both models were loaded before it served, and before the worker took a job
    assert started.events == ["worker started", "arrivals started", "serving (models loaded: True)"]
    assert started.requests.calls == [["warm up"]]
    assert started.worker.calls == [["warm up"]]


def test_the_banner_follows_the_models_load(started: Started) -> None:
    # Then the user is told the model loads first, and the address comes after it
    assert started.out.index("loading the embedding model") < started.out.index("http://127.0.0.1:1")
