"""One local server for every dialect's end-to-end tests, its chat upstream a local OpenAI stub."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import pytest

from tests.e2e.conftest import CHAT_MODEL, LocalServer, started_with_chat_stub
from tests.fakes.openai_server import FakeOpenAIServer

__all__ = ["CHAT_MODEL", "database_rows"]


@pytest.fixture(scope="package")
def upstream() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory, upstream: FakeOpenAIServer) -> Iterator[LocalServer]:
    server = started_with_chat_stub(tmp_path_factory.mktemp("dialects"), upstream.base_url)
    yield server
    server.stop()


def database_rows(server: LocalServer) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table in the server's database file (read-only, beside the server)."""
    uri = f"file:{server.data_dir / 'memory-engine.sqlite3'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: conn.execute(f"SELECT * FROM {table}").fetchall() for table in tables}
