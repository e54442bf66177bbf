"""Which embedder the configuration builds: multilingual-e5-small unless told otherwise."""

from __future__ import annotations

import pytest

from memory_engine import wiring
from memory_engine.adapters.local.e5_embedder import E5Embedder
from memory_engine.adapters.local.minilm_embedder import MiniLmEmbedder
from memory_engine.adapters.local.onnx_embedder import OnnxMiniLmEmbedder
from memory_engine.settings import Settings


def test_the_default_embedder_is_multilingual_e5(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDER", raising=False)

    settings = Settings()

    assert settings.embedder == "e5"
    assert isinstance(wiring.build_embedder(settings), E5Embedder)


@pytest.mark.parametrize(("choice", "adapter"), [("onnx", OnnxMiniLmEmbedder), ("minilm", MiniLmEmbedder)])
def test_minilm_stays_selectable(monkeypatch: pytest.MonkeyPatch, choice: str, adapter: type) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", choice)

    assert isinstance(wiring.build_embedder(Settings()), adapter)


def test_building_the_e5_embedder_loads_nothing_until_first_use() -> None:
    embedder = E5Embedder()

    assert embedder.load_seconds is None
