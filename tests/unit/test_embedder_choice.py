"""Which embedder the configuration builds: multilingual-e5-small on ONNX Runtime unless told otherwise."""

from __future__ import annotations

import pytest

from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder
from memory_engine.composition import wiring
from memory_engine.settings import Settings


def test_the_default_embedder_is_multilingual_e5_on_onnx_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDER", raising=False)

    embedder = wiring.build_model(Settings())

    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.model == "e5"


@pytest.mark.parametrize("choice", ["minilm", "onnx"])
def test_minilm_is_chosen_by_name_or_by_its_old_name(monkeypatch: pytest.MonkeyPatch, choice: str) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", choice)

    settings = Settings()
    embedder = wiring.build_model(settings)

    assert settings.embedder == "minilm"
    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.model == "minilm"


@pytest.mark.parametrize(("setting", "expected"), [(None, "float32"), ("int8", "int8")])
def test_the_embedder_runs_float32_weights_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, setting: str | None, expected: str
) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDER", raising=False)
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDING_PRECISION", raising=False)
    if setting:
        monkeypatch.setenv("MEMORY_ENGINE_EMBEDDING_PRECISION", setting)

    embedder = wiring.build_model(Settings())

    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.precision == expected


def test_building_the_embedder_loads_nothing_until_first_use() -> None:
    embedder = OnnxEmbedder()

    assert embedder.load_seconds is None


def test_the_local_embedder_never_imports_torch() -> None:
    # Given a fresh interpreter that builds the default embedder and embeds with it
    import os
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memory_engine.composition import wiring\n"
        "from memory_engine.settings import Settings\n"
        "wiring.build_embedder(Settings()).embed(['hello'])\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_ENGINE_EMBEDD")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)

    # Then neither torch nor transformers was ever loaded
    assert done.stdout.strip().splitlines()[-1] == "[]"
