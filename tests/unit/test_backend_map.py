"""Every kind of adapter is chosen through its factory map (`memory_engine.composition.providers`), keyed by
the setting that chooses it; a builder's module loads only when its value is chosen."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pytest

from memory_engine.composition import wiring
from memory_engine.composition.backends import BACKENDS
from memory_engine.composition.factory import Factory, load
from memory_engine.composition.providers import (
    EMBEDDERS,
    EXTRACTORS,
    FACT_EXTRACTORS,
    INDEXES,
    KEY_STORES,
    QUEUES,
    STORES,
    USAGE_PLANS,
)
from memory_engine.errors import Unavailable
from memory_engine.settings import SearchSettings, Settings


def allowed(setting: str) -> set[str]:
    return set(typing.get_args(Settings.model_fields[setting].annotation))


def test_every_backend_the_settings_allow_has_an_entry_in_the_map() -> None:
    assert set(BACKENDS) == allowed("backend")


@pytest.mark.parametrize("factory", [STORES, QUEUES, KEY_STORES, USAGE_PLANS], ids=lambda f: f.kind)
def test_every_backend_builds_each_of_its_adapters_through_a_map(factory: Factory[object]) -> None:
    assert set(factory.builders) == allowed("backend")


@pytest.mark.parametrize(
    ("factory", "setting"),
    [(EMBEDDERS, "embedder"), (EXTRACTORS, "extractor"), (FACT_EXTRACTORS, "extractor")],
    ids=lambda value: getattr(value, "kind", value),
)
def test_every_value_of_a_choosing_setting_has_a_builder(factory: Factory[object], setting: str) -> None:
    assert set(factory.builders) == allowed(setting)


@pytest.mark.parametrize(
    "factory",
    [STORES, QUEUES, KEY_STORES, USAGE_PLANS, INDEXES, EMBEDDERS, EXTRACTORS, FACT_EXTRACTORS],
    ids=lambda f: f.kind,
)
def test_every_reference_in_a_map_names_a_callable_builder(factory: Factory[object]) -> None:
    for reference in factory.builders.values():
        assert callable(load(reference)), reference


def test_a_value_no_map_knows_is_refused_naming_the_setting_and_the_choices() -> None:
    factory: Factory[object] = Factory("widget", "MEMORY_ENGINE_WIDGET", {"a": "builtins:dict"})

    with pytest.raises(Unavailable) as raised:
        factory.create("b")

    assert "MEMORY_ENGINE_WIDGET='b'" in str(raised.value)
    assert "choose one of a" in str(raised.value)


def test_every_index_the_setting_allows_has_an_entry_in_the_map() -> None:
    allowed_indexes = set(typing.get_args(typing.get_args(Settings.model_fields["index"].annotation)[0]))

    assert set(INDEXES.builders) | set(INDEXES.elsewhere) == allowed_indexes
    assert {b.index for b in BACKENDS.values()} <= allowed_indexes


@pytest.mark.parametrize(
    ("configured", "choice"),
    [
        ({"backend": "local"}, "files"),  # the backend's own
        ({"backend": "aws", "table_name": "t"}, "memory"),
        ({"backend": "local", "opensearch_url": "https://search"}, "opensearch"),  # where its URL is
        ({"backend": "aws", "table_name": "t", "opensearch_url": "https://search"}, "opensearch"),
        ({"backend": "local", "index": "memory"}, "memory"),  # MEMORY_ENGINE_INDEX over both
        ({"backend": "local", "index": "files", "opensearch_url": "https://search"}, "files"),
    ],
)
def test_the_index_is_the_setting_else_opensearch_where_configured_else_the_backends_own(
    configured: dict[str, str], choice: str, tmp_path: Path
) -> None:
    assert wiring.index_choice(SearchSettings(data_dir=tmp_path, **configured)) == choice  # type: ignore[arg-type]


def test_opensearch_chosen_without_its_endpoint_is_refused_naming_the_variable() -> None:
    with pytest.raises(ValueError, match="MEMORY_ENGINE_OPENSEARCH_URL"):
        Settings(index="opensearch")


def test_the_local_backends_index_files_are_left_to_the_local_server(tmp_path: Path) -> None:
    # Given the local backend without OpenSearch, configured in a process that is no local server
    settings = Settings(backend="local", data_dir=tmp_path)

    # When the core is asked for the index / Then it says who opens the index files
    with pytest.raises(Unavailable, match="memory-engine serve"):
        wiring.build_index(settings, wiring.build_store(settings))


def test_building_the_local_backend_imports_no_aws_sdk(tmp_path: Path) -> None:
    # Given a process that builds every adapter of the local backend
    code = (
        "import sys\n"
        "from memory_engine.composition import key_wiring, wiring\n"
        "from memory_engine.settings import Settings\n"
        f"settings = Settings(backend='local', data_dir={str(tmp_path)!r})\n"
        "wiring.build_store(settings); wiring.build_queue(settings)\n"
        "key_wiring.build_key_store(settings); key_wiring.build_usage_plan_keys(settings)\n"
        "print('boto3' in sys.modules)\n"
    )

    # When it runs
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    # Then boto3 was never loaded
    assert result.stdout.strip() == "False"


def test_the_builtin_extractor_and_the_chat_model_import_no_openai_client() -> None:
    # Given a process that builds the default extractors and the chat upstream
    code = (
        "import sys\n"
        "from memory_engine.composition import wiring\n"
        "from memory_engine.settings import Settings\n"
        "settings = Settings()\n"
        "wiring.build_extractor(settings); wiring.build_fact_extractor(settings)\n"
        "wiring.build_chat_upstream(settings)\n"
        "print('openai' in sys.modules)\n"
    )

    # When it runs
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    # Then the openai package was never loaded
    assert result.stdout.strip() == "False"
