"""Which embedder the configuration builds: multilingual-e5-small on ONNX Runtime unless told otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder
from memory_engine.composition import wiring
from memory_engine.composition.providers.embedders import GemmaSettings
from memory_engine.errors import Unavailable
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


def test_gemma_is_chosen_by_name_with_its_folder_and_matryoshka_dimension(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given EmbeddingGemma chosen, its folder and a 256-dimensional cut
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", "gemma")
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDING_MODEL_DIR", str(tmp_path))
    monkeypatch.setenv("MEMORY_ENGINE_GEMMA_DIMENSION", "256")

    embedder = wiring.build_model(Settings())

    # Then the ONNX embedder runs it, its dimension known before anything loads
    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.model == "gemma"
    assert embedder.dimension == 256
    assert embedder.load_seconds is None


def test_gemma_without_its_folder_is_refused_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", "gemma")
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDING_MODEL_DIR", raising=False)

    with pytest.raises(ValidationError, match=r"set MEMORY_ENGINE_EMBEDDING_MODEL_DIR .*EmbeddingGemma"):
        Settings()


@pytest.mark.parametrize("value", ["300", "1024", "0"])
def test_a_gemma_dimension_it_was_not_trained_for_is_refused_when_gemma_is_built(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str
) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", "gemma")
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDING_MODEL_DIR", str(tmp_path))
    monkeypatch.setenv("MEMORY_ENGINE_GEMMA_DIMENSION", value)

    with pytest.raises(ValidationError, match="GEMMA_DIMENSION must be one of 768, 512, 256, 128"):
        wiring.build_model(Settings())


def test_the_gemma_dimension_is_gemmas_own_setting_not_a_shared_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 46: each provider brings its own settings; another embedder never reads (nor refuses) it.
    monkeypatch.setenv("MEMORY_ENGINE_GEMMA_DIMENSION", "300")
    monkeypatch.delenv("MEMORY_ENGINE_EMBEDDER", raising=False)

    assert "gemma_dimension" not in Settings.model_fields
    assert "gemma_dimension" in GemmaSettings.model_fields
    assert wiring.build_model(Settings()).model == "e5"  # type: ignore[attr-defined]


def test_a_folder_that_is_not_embeddinggemma_says_which_files_it_lacks(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    embedder = OnnxEmbedder("gemma", source=tmp_path)

    with pytest.raises(Unavailable, match=r"tokenizer\.json.*MEMORY_ENGINE_EMBEDDING_MODEL_DIR"):
        embedder.embed(["hello"])


def test_gemma_with_no_folder_at_all_says_which_variable_to_set() -> None:
    with pytest.raises(Unavailable, match="set MEMORY_ENGINE_EMBEDDING_MODEL_DIR"):
        OnnxEmbedder("gemma").embed(["hello"])
