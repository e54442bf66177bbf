"""OpenSearch's own API specification (tests/opensearch_spec/, a copy of part of it) as a validator
of the requests the adapter sends: the method and path must be an operation of the spec, and the
body must match that operation's request body schema.

The spec's object schemas are open (unknown properties pass), which would let a misspelt key or a
clause put where OpenSearch does not read it through. Here every object schema that declares its
properties is closed (`unevaluatedProperties: false`), except the parts of an `allOf`, whose
properties only the whole knows: a body key the spec does not name is an error.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

SPEC = Path(__file__).resolve().parents[1] / "opensearch_spec" / "spec"
BASE = "file:///spec/"
# The schema of each request body, by operation group: a JSON body's requestBodies entry; the
# lines of an ndjson body (msearch, bulk) by position, each against the schema of its kind.
_BODY = "#/components/requestBodies/{}/content/application~1json/schema"
SCHEMAS: dict[str, str] = {
    "search": "namespaces/_core.yaml" + _BODY.format("search"),
    "indices.create": "namespaces/indices.yaml" + _BODY.format("indices.create"),
    "indices.put_mapping": "namespaces/indices.yaml" + _BODY.format("indices.put_mapping"),
    "msearch header": "schemas/_core.msearch.yaml#/components/schemas/MultisearchHeader",
    "msearch body": "schemas/_core.msearch.yaml#/components/schemas/MultisearchBody",
    "bulk action": "schemas/_core.bulk.yaml#/components/schemas/OperationContainer",
}
# Operations that take no body.
BODILESS = {"indices.exists", "indices.delete", "indices.get"}
_FILES = (
    "namespaces/_core.yaml",
    "namespaces/indices.yaml",
    "schemas/_common.aggregations.yaml",
    "schemas/_common.analysis.yaml",
    "schemas/_common.mapping.yaml",
    "schemas/_common.query_dsl.yaml",
    "schemas/_common.yaml",
    "schemas/_core.bulk.yaml",
    "schemas/_core.msearch.yaml",
    "schemas/_core.search.yaml",
    "schemas/indices._common.yaml",
    "schemas/ingestion._common.yaml",
)
_METHODS = ("get", "put", "post", "delete", "head")
_OPEN = ("additionalProperties", "patternProperties", "unevaluatedProperties")


@dataclass(frozen=True)
class Operation:
    group: str  # x-operation-group: "search", "indices.create", ...
    template: str  # the spec's path, "/{index}/_search"


class Spec:
    """The copied spec: `operation(method, path)`, `request_errors(method, path, lines)` and
    `errors(schema, body)`."""

    def __init__(self) -> None:
        import yaml

        self.documents = {
            name: yaml.load((SPEC / name).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            for name in _FILES
        }
        self._operations = [
            (re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"), method, template, group)
            for name in ("namespaces/_core.yaml", "namespaces/indices.yaml")
            for template, item in self.documents[name]["paths"].items()
            for method, group in _groups(item)
        ]
        self._validators: dict[str, Any] = {}
        self._references: Any = None

    def operation(self, method: str, path: str) -> Operation | None:
        """The spec's operation for an HTTP request, or None when the spec has no such path."""
        bare = path.split("?", 1)[0].rstrip("/") or "/"
        for pattern, verb, template, group in self._operations:
            if verb == method.lower() and pattern.match(bare):
                return Operation(group, template)
        return None

    def request_errors(self, method: str, path: str, lines: list[Any]) -> list[str]:
        """What the spec finds wrong with one request: an unknown operation, or a body (its lines
        for ndjson) that does not match the operation's schemas. The documents a bulk request
        indexes are free-form to the spec: the tests check them against the mapping."""
        operation = self.operation(method, path)
        if operation is None:
            return [f"{method} {path}: no such operation in the OpenSearch API specification"]
        if operation.group == "msearch":
            if len(lines) % 2:
                return [f"{method} {path}: an msearch body is header and search pairs"]
            return [
                f"line {n}: {error}"
                for n, line in enumerate(lines)
                for error in self.errors("msearch body" if n % 2 else "msearch header", line)
            ]
        if operation.group == "bulk":
            return [f"line {n}: {error}" for n, error in _bulk_errors(self, lines)]
        if operation.group in BODILESS:
            return [f"{method} {path}: a body where the operation takes none"] if lines else []
        if operation.group not in SCHEMAS:
            return [f"{method} {path}: {operation.group} is not an operation these tests know"]
        if len(lines) != 1:
            return [f"{method} {path}: one JSON body expected, got {len(lines)}"]
        return self.errors(operation.group, lines[0])

    def errors(self, schema: str, body: Any) -> list[str]:
        """What the schema named in `SCHEMAS` finds wrong with `body` (none: valid)."""
        validator = self._validator(schema)
        return [
            f"{'/'.join(str(p) for p in error.absolute_path) or '(body)'}: {error.message}"
            for error in sorted(validator.iter_errors(body), key=lambda e: list(map(str, e.absolute_path)))
        ]

    def _validator(self, schema: str) -> Any:
        if schema not in self._validators:
            from jsonschema import Draft202012Validator

            self._validators[schema] = Draft202012Validator(
                {"$ref": BASE + SCHEMAS[schema]}, registry=self._registry()
            )
        return self._validators[schema]

    def _registry(self) -> Any:
        """Every document (closed) under its URI, for `$ref`s across files."""
        if self._references is None:
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012

            self._references = Registry().with_resources(
                (BASE + name, Resource.from_contents(document, default_specification=DRAFT202012))
                for name, document in _closed_documents(self.documents).items()
            )
        return self._references


def _bulk_errors(spec: Spec, lines: list[Any]) -> Iterator[tuple[int, str]]:
    """Each action line against the spec; index/create/update actions are followed by their source."""
    n = 0
    while n < len(lines):
        action = lines[n]
        for error in spec.errors("bulk action", action):
            yield n, error
        n += 2 if isinstance(action, dict) and set(action) & {"index", "create", "update"} else 1


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _groups(item: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for method in _METHODS:
        if method in item:
            yield method, str(item[method].get("x-operation-group", ""))


def _closed_documents(documents: dict[str, Any]) -> dict[str, Any]:
    """Every document with its object schemas closed, but for `allOf` parts and the schemas an
    `allOf` names by reference (their properties are completed by the other parts)."""
    composed = {
        urljoin(BASE + name, ref) for name, document in documents.items() for ref in _all_of_refs(document)
    }
    closed = {}
    for name, document in documents.items():
        document = copy.deepcopy(document)
        components = document.get("components", {})
        for kind, entries in components.items():
            for key, schema in entries.items():
                where = f"{BASE}{name}#/components/{kind}/{_escape(key)}"
                _close(schema, part=where in composed)
        for item in document.get("paths", {}).values():
            _close(item, part=False)
        closed[name] = document
    return closed


def _all_of_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for part in node.get("allOf", []):
            if isinstance(part, dict) and "$ref" in part:
                yield part["$ref"]
        for value in node.values():
            yield from _all_of_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _all_of_refs(value)


def _close(node: Any, part: bool) -> None:
    """Close `node` (and the schemas inside it) unless it is one part of an `allOf`."""
    if isinstance(node, list):
        for value in node:
            _close(value, part=False)
        return
    if not isinstance(node, dict):
        return
    opened = any(key in node for key in _OPEN)
    if not part and not opened and ("properties" in node or "allOf" in node):
        node["unevaluatedProperties"] = False
    for key, value in node.items():
        if key == "allOf":
            for piece in value:
                _close(piece, part=True)
        elif key == "properties" and isinstance(value, dict):
            for schema in value.values():
                _close(schema, part=False)
        elif key not in ("$ref", "enum", "const", "required", "example", "examples", "default"):
            _close(value, part=False)


@cache
def spec() -> Spec:
    """One loaded copy per test session (~1 MB of YAML)."""
    return Spec()
