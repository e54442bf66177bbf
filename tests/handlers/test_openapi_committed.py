"""The committed OpenAPI document (docs/openapi.json) is the one the handlers describe today.

A change to a route, a request or response model or an error status changes the generated
document; this test then fails until the committed copy is refreshed with `make openapi`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory_engine_app.server.openapi import build_spec

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
REFRESH = "run `make openapi` (= memory-engine openapi --out docs/openapi.json) and commit docs/openapi.json"


def differences(committed: Any, generated: Any, at: str = "") -> list[str]:
    """JSON pointers where the two documents differ, for a message a reader can act on."""
    if isinstance(committed, dict) and isinstance(generated, dict):
        return [
            found
            for key in sorted(set(committed) | set(generated))
            for found in (
                differences(committed.get(key), generated.get(key), f"{at}/{key}")
                if key in committed and key in generated
                else [f"{at}/{key} ({'only committed' if key in committed else 'only generated'})"]
            )
        ]
    return [] if committed == generated else [at or "/"]


def test_the_committed_openapi_document_matches_the_handlers() -> None:
    assert COMMITTED.is_file(), f"docs/openapi.json is missing: {REFRESH}"
    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))

    drift = differences(committed, build_spec())

    assert drift == [], f"docs/openapi.json is out of date ({'; '.join(drift[:10])}): {REFRESH}"
