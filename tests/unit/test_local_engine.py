"""The local server's engine: the configured one with the index files beside the SQLite database,
built once and installed in `wiring`, so every handler the server calls shares it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.settings import get_settings, reset_settings
from memory_engine_app import local_engine
from memory_engine_app.local_index import local_index_path
from tests.fakes.engine import fake_engine


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("MEMORY_ENGINE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("MEMORY_ENGINE_OPENSEARCH_URL", raising=False)
    monkeypatch.setenv("MEMORY_ENGINE_BACKEND", "local")
    reset_settings()
    wiring.reset()
    yield tmp_path
    wiring.reset()
    reset_settings()


def test_the_local_engine_keeps_its_index_in_files_beside_the_database(data_dir: Path) -> None:
    # When the local server builds its engine
    built = local_engine.engine()

    # Then its index lives beside the SQLite file, and every handler's wiring.engine() is that engine
    assert local_index_path(get_settings()).parent == data_dir
    assert local_index_path(get_settings()).exists()
    assert wiring.engine() is built


def test_the_local_engine_is_built_once(data_dir: Path) -> None:
    assert local_engine.engine() is local_engine.engine()


def test_an_engine_a_test_installed_is_the_one_the_local_server_uses(data_dir: Path) -> None:
    # Given an engine installed by hand
    installed: Engine = fake_engine()
    wiring.use(installed)

    # When the local server asks for its engine / Then it is that one
    assert local_engine.engine() is installed
