"""Which key resolver a process gets, and creating a key from the command line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_engine import wiring
from memory_engine.adapters.dynamodb_keys import DynamoDbKeyResolver
from memory_engine.auth import SingleKey
from memory_engine.cli import main
from memory_engine.errors import Unavailable
from memory_engine.settings import reset_settings
from tests.fakes.dynamodb import TABLE, dynamodb

__all__ = ["dynamodb"]  # the fixture


@pytest.fixture(autouse=True)
def fresh_settings() -> Iterator[None]:
    reset_settings()
    wiring.reset()
    yield
    reset_settings()
    wiring.reset()


def test_the_local_backend_resolves_the_one_local_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MEMORY_ENGINE_API_KEY", "me_local_key")
    resolver = wiring.key_resolver()
    assert isinstance(resolver, SingleKey)
    assert resolver.tenant_for("me_local_key") == "local"


def test_the_aws_backend_resolves_keys_from_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_BACKEND", "aws")
    monkeypatch.setenv("MEMORY_ENGINE_TABLE_NAME", TABLE)
    assert isinstance(wiring.key_resolver(), DynamoDbKeyResolver)


def test_the_aws_backend_without_a_table_name_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_BACKEND", "aws")
    with pytest.raises(Unavailable, match="MEMORY_ENGINE_TABLE_NAME"):
        wiring.key_resolver()


def test_create_key_prints_a_key_that_then_resolves_to_the_tenant(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the AWS backend's table
    monkeypatch.setenv("MEMORY_ENGINE_BACKEND", "aws")
    monkeypatch.setenv("MEMORY_ENGINE_TABLE_NAME", TABLE)
    # When a key is created from the command line
    assert main(["create-key", "--tenant", "acme"]) == 0
    key = capsys.readouterr().out.strip()
    # Then the printed key belongs to acme
    assert DynamoDbKeyResolver(TABLE, dynamodb).tenant_for(key) == "acme"


def test_create_key_on_the_local_backend_explains_there_is_one_local_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(Unavailable, match="one key"):
        main(["create-key", "--tenant", "acme"])
