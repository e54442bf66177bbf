"""Calling a dialect's lambda_handler with its sample event, changed where a test needs it."""

from __future__ import annotations

import copy
import importlib
import json
from dataclasses import dataclass
from typing import Any

from memory_engine_app.server.apigw import LocalContext
from tests.handlers.conftest import load_event


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    text: str

    @property
    def json(self) -> Any:
        return json.loads(self.text)


def call(
    function: str,
    body: Any = ...,
    *,
    path: str | None = None,
    path_parameters: dict[str, str] | None = None,
    tenant: str | None = "tenant-a",
) -> Answer:
    """The function's events/ sample, with another body, path or path parameters if given."""
    event = copy.deepcopy(load_event(function))
    if body is not ...:
        event["body"] = json.dumps(body, ensure_ascii=False)
    if path is not None:
        event["path"] = event["requestContext"]["path"] = path
    if path_parameters is not None:
        event["pathParameters"] = path_parameters
    event["requestContext"]["authorizer"] = {"tenant": tenant} if tenant else None
    handler = importlib.import_module(f"functions.{function}.handler").lambda_handler
    result = handler(event, LocalContext())
    headers = {**(result.get("headers") or {})}
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers[name] = values[-1]
    return Answer(result["statusCode"], headers, result.get("body") or "")


def sample_body(function: str) -> Any:
    return json.loads(load_event(function)["body"])
