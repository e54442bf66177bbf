from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine_app.server.apigw import LocalContext
from tests.fakes.engine import fake_engine

EVENTS = Path(__file__).resolve().parents[2] / "events"

Invoke = Callable[..., tuple[int, dict[str, Any]]]


def load_event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS / f"{name}.json").read_text())


@pytest.fixture
def engine() -> Iterator[Engine]:
    engine = fake_engine()
    wiring.use(engine)
    yield engine
    wiring.use(None)


@pytest.fixture
def invoke(engine: Engine) -> Invoke:
    """Feed an events/ file (optionally with another body or tenant) to its lambda_handler."""

    def _invoke(
        function: str, body: Any = ..., tenant: str | None = "tenant-a", raw: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        event = copy.deepcopy(load_event(function))
        if body is not ...:
            event["body"] = json.dumps(body, ensure_ascii=False)
        if raw is not None:
            event["body"] = raw
        if event["requestContext"].get("authorizer") is not None or tenant is None:
            event["requestContext"]["authorizer"] = {"tenant": tenant} if tenant else None
        handler = importlib.import_module(f"functions.{function}.handler").lambda_handler
        result = handler(event, LocalContext())
        return result["statusCode"], json.loads(result["body"])

    return _invoke
