"""The Python client's wire models (clients/python/memory_engine_client/models.py) are generated from
the served OpenAPI document, docs/openapi.json, which a test keeps equal to the handlers: so a field
the API adds, renames or bounds differently fails here until `make client-models` is run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from memory_engine_client import models

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = json.loads((ROOT / "docs" / "openapi.json").read_text())
COMPONENTS: dict[str, Any] = DOCUMENT["components"]["schemas"]
OBJECTS = sorted(name for name, schema in COMPONENTS.items() if "properties" in schema)
# What a field's value may be: its type and bounds, wherever they sit (anyOf, $ref, items).
KEYWORDS = ("type", "const", "enum", "maxLength", "minLength", "pattern", "minimum", "maximum", "maxItems")


def resolve(schema: Any, defs: dict[str, Any]) -> Any:
    if isinstance(schema, dict):
        if "$ref" in schema:
            return resolve(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
        return {key: resolve(value, defs) for key, value in schema.items()}
    if isinstance(schema, list):
        return [resolve(item, defs) for item in schema]
    return schema


def shape(schema: Any) -> set[str]:
    """The type and bound keywords of a field, wherever they sit (anyOf, oneOf, items), nested
    objects by their field names; null left out (a field with a default may be null in the
    generated model, which never sends it unless given)."""
    found: set[str] = set()
    if isinstance(schema, list):
        for item in schema:
            found |= shape(item)
        return found
    if not isinstance(schema, dict):
        return found
    for key in KEYWORDS:
        if key in schema and schema[key] not in ("null", "object"):
            value = float(schema[key]) if key in ("minimum", "maximum") else schema[key]
            found.add(f"{key}={json.dumps(value, sort_keys=True)}")
    if "properties" in schema:
        found.add("object:" + ",".join(sorted(schema["properties"])))
        return found
    for key in ("anyOf", "oneOf", "allOf", "items"):
        if key in schema:
            found |= shape(schema[key])
    return found


def test_every_object_the_api_describes_has_a_model_in_the_client() -> None:
    missing = [name for name in OBJECTS if not isinstance(getattr(models, name, None), type)]

    assert missing == [], f"run `make client-models` ({missing} are not in the client's models)"


@pytest.mark.parametrize("name", OBJECTS)
def test_the_clients_model_has_the_documents_fields_types_and_bounds(name: str) -> None:
    model = getattr(models, name)
    assert issubclass(model, BaseModel)
    generated = model.model_json_schema()
    served = COMPONENTS[name]

    assert set(generated["properties"]) == set(served["properties"]), "run `make client-models`"
    assert set(generated.get("required", [])) == set(served.get("required", []))
    mine = resolve(generated, generated.get("$defs", {}))["properties"]
    theirs = resolve(served, COMPONENTS)["properties"]
    for field in served["properties"]:
        assert shape(mine[field]) == shape(theirs[field]), f"{name}.{field}: run `make client-models`"
