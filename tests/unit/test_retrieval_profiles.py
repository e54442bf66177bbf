"""Retrieval defaults per embedder (`retrieval.config.PROFILES`): the engine ranks with the profile
of the model it embeds with; an embedder without one ranks with the measured default."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from memory_engine.composition import wiring
from memory_engine.retrieval import config
from memory_engine.retrieval.config import PROFILES, RetrievalConfig, for_embedder
from memory_engine.settings import Settings


@pytest.mark.parametrize("embedder", ["e5", "minilm", "lambda", "sagemaker"])
def test_e5_and_the_models_without_a_profile_keep_the_measured_default(embedder: str) -> None:
    assert embedder not in PROFILES
    assert for_embedder(embedder) == RetrievalConfig()


def test_every_profile_names_real_settings_and_every_weight() -> None:
    known = {field.name for field in fields(RetrievalConfig)}
    for name, profile in PROFILES.items():
        assert set(profile) <= known, name
        built = for_embedder(name)
        assert set(built.weights) == set(RetrievalConfig().weights), name


def test_the_engine_ranks_with_its_embedders_profile(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Given a profile for MiniLM (any model the test can build without weights)
    monkeypatch.setitem(config.PROFILES, "minilm", {"window_share": 0.25})
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", "minilm")
    monkeypatch.setenv("MEMORY_ENGINE_BACKEND", "local")
    monkeypatch.setenv("MEMORY_ENGINE_INDEX", "memory")
    monkeypatch.setenv("MEMORY_ENGINE_DATA_DIR", str(tmp_path))

    # When the composition assembles the engine the settings describe
    engine = wiring.assemble(Settings())

    # Then it ranks with that profile, not the shared default
    assert engine.retrieval.window_share == 0.25
    assert engine.retrieval == for_embedder("minilm")
