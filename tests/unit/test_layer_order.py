"""The layers import only downward, as pyproject.toml's [tool.importlinter] contracts say (the
order is drawn in docs/architecture.md): lazy imports inside functions count, and every module
of the core must have its place in the order. The contracts are strict enough to refuse an
adapter that reaches up into a use case or the composition: the probes below prove it on the
real import graph with one import added."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest
from importlinter import configuration
from importlinter.adapters.building import GraphBuilder
from importlinter.application.app_config import settings
from importlinter.application.use_cases import lint_imports

ROOT = Path(__file__).resolve().parents[2]
PROBE = "memory_engine.adapters.local.probe"


def _kept(contract: str) -> bool:
    return lint_imports(
        config_filename=str(ROOT / "pyproject.toml"),
        limit_to_contracts=(contract,),
        cache_dir=None,
        no_logo=True,
    )


@pytest.mark.parametrize(
    "contract",
    [
        "outer-ring",  # the local server and CLI over the handlers over the core
        "core-layers",  # composition over use cases and adapters over the domain over models
        "composition-layers",  # the wiring over the key wiring over the factory maps
        "doors",  # the client, MCP server and LangGraph store: the API models only
    ],
)
def test_every_layer_imports_only_the_layers_below_it(
    contract: str, capsys: pytest.CaptureFixture[str]
) -> None:
    configuration.configure()  # import-linter's own adapters (its CLI does this at import)

    assert _kept(contract), capsys.readouterr().out


class _ProbeGraphBuilder(GraphBuilder):
    """The project's import graph as it stands, plus one module of the adapters importing `target`."""

    def __init__(self, target: str) -> None:
        self.target = target

    def build(self, *args: object, **kwargs: object) -> grimp.ImportGraph:
        graph = super().build(*args, **kwargs)  # type: ignore[arg-type]
        graph.add_module(PROBE)
        graph.add_import(
            importer=PROBE, imported=self.target, line_number=1, line_contents=f"import {self.target}"
        )
        return graph


@pytest.fixture
def probe_graph() -> Iterator[type[_ProbeGraphBuilder]]:
    yield _ProbeGraphBuilder
    configuration.configure()  # the real graph again for whoever runs next


@pytest.mark.parametrize(
    "target",
    [
        "memory_engine.usecases.retrieve",  # an adapter calling a use case
        "memory_engine.usecases.facts",  # or a helper that lives beside the use cases
        "memory_engine.composition.wiring",  # or reaching for the assembled engine
        "memory_engine.composition.providers",  # or choosing another adapter itself
    ],
)
def test_an_adapter_importing_upward_breaks_the_core_contract(
    target: str, probe_graph: type[_ProbeGraphBuilder], capsys: pytest.CaptureFixture[str]
) -> None:
    configuration.configure()
    settings.configure(GRAPH_BUILDER=probe_graph(target))

    kept = _kept("core-layers")

    out = capsys.readouterr().out
    assert not kept, out
    assert PROBE in out and target in out
