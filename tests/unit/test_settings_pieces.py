"""Settings come in pieces by concern, each reading the same environment variables as the whole:
a process reads only the piece it uses (the authorizer its keys' piece), and the documented
variables stay what they were."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from memory_engine.composition.providers.embedders import (
    GemmaSettings,
    LambdaEmbedderSettings,
    SageMakerEmbedderSettings,
)
from memory_engine.composition.providers.opensearch import OpenSearchSettings
from memory_engine.settings import (
    ChatSettings,
    EmbeddingSettings,
    ExtractionSettings,
    KeySettings,
    LogSettings,
    Piece,
    QueueSettings,
    SearchSettings,
    ServerSettings,
    Settings,
    StorageSettings,
    WorkerSettings,
    loaded,
    reset_settings,
)

ROOT = Path(__file__).resolve().parents[2]
PIECES = [
    LogSettings,
    StorageSettings,
    KeySettings,
    QueueSettings,
    SearchSettings,
    EmbeddingSettings,
    ExtractionSettings,
    ChatSettings,
    WorkerSettings,
    ServerSettings,
]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    reset_settings()
    yield monkeypatch
    monkeypatch.undo()
    reset_settings()


def test_the_whole_is_the_pieces_and_declares_nothing_of_its_own() -> None:
    from_pieces = {name for piece in PIECES for name in piece.model_fields}

    assert set(Settings.model_fields) == from_pieces
    assert Settings.__annotations__ == {}


@pytest.mark.parametrize("piece", PIECES, ids=lambda piece: piece.__name__)
def test_a_piece_reads_each_setting_as_the_whole_does(piece: type[Piece]) -> None:
    for name, field in piece.model_fields.items():
        whole = Settings.model_fields[name]
        assert (field.validation_alias, field.default, field.annotation) == (
            whole.validation_alias,
            whole.default,
            whole.annotation,
        ), name


@pytest.mark.parametrize(
    ("piece", "variable", "value", "field", "expected"),
    [
        (KeySettings, "MEMORY_ENGINE_API_KEY", "k-1", "api_key", "k-1"),
        (LogSettings, "MEMORY_ENGINE_LOG_LEVEL", "DEBUG", "log_level", "DEBUG"),
        (EmbeddingSettings, "MEMORY_ENGINE_EMBEDDER", "onnx", "embedder", "minilm"),
        (ChatSettings, "OPENAI_BASE_URL", "http://h:9/v1", "openai_base_url", "http://h:9/v1"),
        (SearchSettings, "MEMORY_ENGINE_EMBEDDING_DIMENSION", "1024", "embedding_dimension", 1024),
    ],
)
def test_a_piece_reads_its_variables_from_the_environment(
    env: pytest.MonkeyPatch, piece: type[Piece], variable: str, value: str, field: str, expected: object
) -> None:
    env.setenv(variable, value)

    assert getattr(loaded(piece), field) == expected


def test_a_piece_asks_only_for_the_variables_of_its_own_concern(env: pytest.MonkeyPatch) -> None:
    # Given an AWS function's environment with the table but no queue and no index, in Lambda
    env.setenv("MEMORY_ENGINE_BACKEND", "aws")
    env.setenv("MEMORY_ENGINE_TABLE_NAME", "memory-engine")
    env.setenv("AWS_LAMBDA_FUNCTION_NAME", "memory-engine-authorizer")

    # Then the keys' piece is complete, and the queue's piece names what it lacks
    assert loaded(KeySettings).table_name == "memory-engine"
    with pytest.raises(ValidationError, match="MEMORY_ENGINE_QUEUE_URL"):
        loaded(QueueSettings)


def test_the_whole_names_every_missing_variable_at_once(env: pytest.MonkeyPatch) -> None:
    env.setenv("MEMORY_ENGINE_BACKEND", "aws")
    env.setenv("MEMORY_ENGINE_INDEX", "opensearch")

    with pytest.raises(ValidationError) as raised:
        Settings()

    for variable in ("TABLE_NAME", "QUEUE_URL", "OPENSEARCH_URL"):
        assert f"MEMORY_ENGINE_{variable}" in str(raised.value)


def test_a_piece_is_read_once_until_the_settings_are_reset(env: pytest.MonkeyPatch) -> None:
    first = loaded(ServerSettings)
    env.setenv("MEMORY_ENGINE_RATE_LIMIT_BURST", "7")

    assert loaded(ServerSettings) is first
    reset_settings()
    assert loaded(ServerSettings).rate_limit_burst == 7


@pytest.mark.parametrize("page", ["configuration.md", "aws.md"])
def test_every_variable_the_docs_tables_name_is_a_setting(page: str) -> None:
    rows = re.findall(r"^\| `MEMORY_ENGINE_([A-Z0-9_]+)` \|", (ROOT / "docs" / page).read_text(), re.M)

    # The shared pieces, and the settings a provider brings with it (read when it is chosen)
    providers = (GemmaSettings, LambdaEmbedderSettings, SageMakerEmbedderSettings, OpenSearchSettings)
    known = {*Settings.model_fields, *(name for piece in providers for name in piece.model_fields)}

    assert rows, page
    assert [row for row in rows if row.lower() not in known] == []
