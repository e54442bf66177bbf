"""The harness's embedding cache is per set of vectors: a cache of one runtime's vectors must not
stand in for another's (the benchmark would measure the wrong embedder)."""

from __future__ import annotations

import pytest

from bench.locomo.engine_run import cache_name
from memory_engine.settings import Settings


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"embedder": "e5", "embedding_precision": "float32"}, "e5"),
        ({"embedder": "e5", "embedding_precision": "int8"}, "e5-int8"),
        ({"embedder": "minilm"}, "minilm"),
        ({"embedder": "minilm", "embedding_precision": "int8"}, "minilm-int8"),
    ],
)
def test_each_set_of_vectors_has_a_cache_of_its_own(options: dict[str, str], expected: str) -> None:
    assert cache_name(Settings(**options)) == expected  # type: ignore[arg-type]
