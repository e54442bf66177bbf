"""Route permissions are declared on the route: one without them, or two routes of one function
that disagree, stop the synth with a message saying what to add; none is granted by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from functions.routes import ROUTES, Need, Route, functions, needs
from infra.access import OTHER_FUNCTION_NEEDS, MissingNeeds, function_needs
from infra.app import new_app
from infra.config import StackConfig
from infra.stack import MemoryEngineStack
from tests.infra.variants import placeholder_layer

UNDECLARED = Route("POST", "/v1/engine/summaries/", "engine_summaries")


def test_every_route_of_the_table_declares_its_needs() -> None:
    assert [route.path for route in ROUTES if route.needs is None] == []
    assert set(function_needs()) == set(functions()) | set(OTHER_FUNCTION_NEEDS)


def test_a_route_without_needs_is_refused_with_how_to_declare_them() -> None:
    with pytest.raises(MissingNeeds) as refused:
        function_needs([*ROUTES, UNDECLARED])

    assert "POST /v1/engine/summaries/ (engine_summaries) declares no needs" in str(refused.value)
    assert "functions/routes.py" in str(refused.value)


def test_two_routes_of_one_function_must_declare_the_same_needs() -> None:
    first = Route("GET", "/v1/things/{id}", "things", needs=needs(Need.TABLE_GET))
    second = Route("GET", "/v1/things:get", "things", rest_api=False, needs=needs(Need.TABLE_PUT))

    with pytest.raises(MissingNeeds, match="routes of things declare different needs"):
        function_needs([first, second])


def test_a_stack_with_a_route_without_needs_fails_to_synthesize(tmp_path: Path) -> None:
    app = new_app(outdir=str(tmp_path / "cdk.out"))
    config = StackConfig(layer_dir=placeholder_layer(tmp_path / "layer"))

    with pytest.raises(MissingNeeds, match="engine_summaries"):
        MemoryEngineStack(app, "MemoryEngine-undeclared", config=config, routes=(UNDECLARED,))
