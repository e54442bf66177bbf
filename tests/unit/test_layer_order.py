"""The layers import only downward, as pyproject.toml's [tool.importlinter] contracts say (the
order is drawn in docs/architecture.md): lazy imports inside functions count, and every module
of the core must have its place in the order."""

from __future__ import annotations

from pathlib import Path

import pytest
from importlinter import configuration
from importlinter.application.use_cases import lint_imports

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "contract",
    [
        "outer-ring",  # the local server and CLI over the handlers over the core
        "core-layers",  # composition over adapters and use cases over the domain over models
        "doors",  # the client, MCP server and LangGraph store: the API models only
    ],
)
def test_every_layer_imports_only_the_layers_below_it(
    contract: str, capsys: pytest.CaptureFixture[str]
) -> None:
    configuration.configure()  # import-linter's own adapters (its CLI does this at import)
    kept = lint_imports(
        config_filename=str(ROOT / "pyproject.toml"),
        limit_to_contracts=(contract,),
        cache_dir=None,
        no_logo=True,
    )

    assert kept, capsys.readouterr().out
