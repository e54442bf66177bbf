"""One OpenAPI 3.1 document for every route in `functions/routes.py`.

Each handler's Powertools resolver describes its own operation (request body, success model);
this module merges them under the paths API Gateway serves, adds the API-key security scheme and
documents every error status the route can answer, with the envelope its resolver answers with.
Served without auth at GET /v1/openapi.json by the local server, written by `memory-engine openapi`.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import warnings
from collections.abc import Iterable
from typing import Any

from memory_engine.edge.http import ErrorShaper, error_shaper_of, native_error_body

OPENAPI_PATH = "/v1/openapi.json"
TITLE = "memory-engine"
VERSION = "1.0.0"

# Answered by the gateway (the local server's dispatcher, API Gateway on AWS) before any handler.
GATEWAY_STATUSES = {
    401: "Missing, malformed, unknown or revoked API key",
    413: "Body over the size limit (6 MB)",
    # A query string can be long on the GET routes (export's and the inspector's cursors, scopes).
    414: "Request line over the size limit (a query string too long): send a shorter one",
    429: "Too many requests for this key; `Retry-After` says when to come back",
}
# Answered by the handler through its resolver's error envelope.
HANDLER_STATUSES = {
    400: "Malformed JSON",
    404: "Unknown session, memory or dialog (also for another tenant's ids)",
    409: "Conflicts with what is stored",
    422: "Invalid field (each bad field named in `errors`)",
    502: "The upstream chat model failed (chat completions only)",
    503: "A dependency is down; nothing was written, retry",
}
_REF = re.compile(r'"#/components/schemas/([^"]+)"')
_PARAMETER = re.compile(r"\{[^}/]+\}")


def build_spec(routes: Iterable[Any] | None = None) -> dict[str, Any]:
    """The merged document for `routes` (default: every route in functions/routes.py).

    A handler may declare more about its answers (`responses=` on its route, e.g. a second media
    type); that is kept. Error statuses are then documented for every route alike."""
    if routes is None:
        from functions.routes import ROUTES

        routes = ROUTES
    spec: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": TITLE, "version": VERSION, "description": "Long-term memory for dialogue."},
        "servers": [{"url": "/"}],
        "paths": {},
        "components": {
            "schemas": {},
            "securitySchemes": {
                "apiKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "Bearer <key>, Token <key> or the bare key",
                }
            },
        },
    }
    schemas: dict[str, Any] = spec["components"]["schemas"]
    gateway_error = error_schema(native_error_body)
    operation_ids: set[str] = set()
    for route in routes:
        app = importlib.import_module(f"functions.{route.function}.handler").app
        with warnings.catch_warnings():
            # Powertools warns when one function serves two paths; _unique numbers the second id.
            warnings.simplefilter("ignore", UserWarning)
            document = json.loads(app.get_openapi_json_schema())
        path, operation = _operation(document, route.method, route.path)
        operation["operationId"] = _unique(operation["operationId"], operation_ids)
        _merge_schemas(schemas, document.get("components", {}).get("schemas", {}), route.function)
        handler_error = error_schema(error_shaper_of(app))
        operation["responses"] = _responses(operation["responses"], route.auth, handler_error, gateway_error)
        operation["security"] = [{"apiKey": []}] if route.auth else []
        spec["paths"].setdefault(path, {})[route.method.lower()] = operation
    _prune(spec)
    return spec


def error_schema(shaper: ErrorShaper) -> dict[str, Any]:
    """The JSON schema of the error envelope a resolver answers with, read off two samples of it
    (with and without field errors: an envelope may leave out or null what it does not need)."""
    with_fields = _schema_of_sample(shaper(422, "message", [{"field": "f", "message": "m"}]))
    without = _schema_of_sample(shaper(404, "message", []))
    return _union(with_fields, without)


def _union(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """A schema both samples' schemas fit: the same where they agree, either where they differ."""
    if a == {} or b == {}:  # one sample held null there: anything goes
        return {}
    if a == b or (b.get("type") == "array" and a.get("type") == "array" and b["items"] == {}):
        return a  # an empty list fits any item schema
    if a.get("type") == b.get("type") == "object" and set(a["properties"]) == set(b["properties"]):
        properties = {key: _union(a["properties"][key], b["properties"][key]) for key in a["properties"]}
        return {**a, "properties": properties}
    return {"anyOf": [a, b]}


def _operation(document: dict[str, Any], method: str, path: str) -> tuple[str, dict[str, Any]]:
    """The spec path and operation for `method path` in one resolver's document.

    Matched by shape: Powertools drops trailing slashes and names path parameters after the
    handler's arguments (`{memory_id}` where routes.py says `{id}`); the spec keeps the route's
    trailing slash and the handler's parameter names, so path and parameters agree.
    """
    wanted = _shape(path)
    for found_path, operations in document.get("paths", {}).items():
        if _shape(found_path) == wanted and method.lower() in operations:
            spec_path = found_path + ("/" if path.endswith("/") and not found_path.endswith("/") else "")
            return spec_path, copy.deepcopy(operations[method.lower()])
    raise LookupError(f"the handler for {method} {path} declares no such route")


def _shape(path: str) -> str:
    return _PARAMETER.sub("{}", path.rstrip("/") or "/")


def _unique(operation_id: str, taken: set[str]) -> str:
    """One function serving two spellings of a path gets one id from Powertools: number the second."""
    unique, n = operation_id, 2
    while unique in taken:
        unique, n = f"{operation_id}_{n}", n + 1
    taken.add(unique)
    return unique


def _merge_schemas(into: dict[str, Any], new: dict[str, Any], origin: str) -> None:
    for name, schema in new.items():
        if name in into and into[name] != schema:
            raise ValueError(f"two different models are both called {name} (one from {origin}): rename one")
        into[name] = schema


def _responses(
    declared: dict[str, Any], auth: bool, handler_error: dict[str, Any], gateway_error: dict[str, Any]
) -> dict[str, Any]:
    # Powertools' own 422 describes its FastAPI-style body, which the error handler never sends.
    responses = {code: value for code, value in declared.items() if code != "422"}
    statuses = dict(HANDLER_STATUSES)
    if auth:
        statuses.update(GATEWAY_STATUSES)
    for status, description in sorted(statuses.items()):
        schema = handler_error
        if status in GATEWAY_STATUSES and gateway_error != handler_error:
            schema = {"anyOf": [gateway_error, handler_error]}
        response: dict[str, Any] = {
            "description": description,
            "content": {"application/json": {"schema": schema}},
        }
        if status == 429:
            response["headers"] = {"Retry-After": {"schema": {"type": "string", "pattern": "^[0-9]+$"}}}
        responses[str(status)] = response
    return responses


def _schema_of_sample(sample: Any) -> dict[str, Any]:
    """A JSON schema that an error envelope like `sample` matches (types, not values)."""
    if isinstance(sample, dict):
        return {
            "type": "object",
            "properties": {key: _schema_of_sample(value) for key, value in sample.items()},
            "required": sorted(sample),
        }
    if isinstance(sample, list):
        return {"type": "array", "items": _schema_of_sample(sample[0]) if sample else {}}
    if isinstance(sample, bool):
        return {"type": "boolean"}
    if isinstance(sample, int):
        return {"type": "integer"}
    if isinstance(sample, float):
        return {"type": "number"}
    if sample is None:
        return {}
    return {"type": "string"}


def _prune(spec: dict[str, Any]) -> None:
    """Drop component schemas no operation refers to (Powertools' unused validation models)."""
    schemas = spec["components"]["schemas"]
    reachable: set[str] = set()
    frontier = set(_REF.findall(json.dumps(spec["paths"])))
    while frontier:
        name = frontier.pop()
        if name in reachable or name not in schemas:
            continue
        reachable.add(name)
        frontier |= set(_REF.findall(json.dumps(schemas[name])))
    for name in set(schemas) - reachable:
        del schemas[name]
