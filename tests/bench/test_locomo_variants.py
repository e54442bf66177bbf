"""The benchmark's ablation rows: every ranking feature has one."""

from __future__ import annotations

from bench.quality.locomo.variants import VARIANTS, Variant
from memory_engine.retrieval.config import DEFAULT_WEIGHTS
from memory_engine.retrieval.features import MEMORY_FEATURES, TURN_FEATURES


def _zeroes(variant: Variant, feature: str) -> bool:
    config = variant.config
    return config.weights[feature] == 0.0 or (feature == "window" and config.window_share == 0.0)


def test_every_feature_has_a_default_weight() -> None:
    assert set(DEFAULT_WEIGHTS) == {*TURN_FEATURES, *MEMORY_FEATURES, "handicap"}


def test_every_feature_that_counts_by_default_has_a_row_without_it() -> None:
    counted = [name for name, weight in DEFAULT_WEIGHTS.items() if weight]

    assert [name for name in counted if not any(_zeroes(variant, name) for variant in VARIANTS)] == []
