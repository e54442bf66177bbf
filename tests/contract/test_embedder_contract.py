"""The Embedder port on both in-process models: the ONNX default and sentence-transformers.

Loads the real MiniLM weights (and exports them to ONNX once per machine, into the user cache, if
that was never done): slower than the other contract tests, so each model loads once per module.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from memory_engine.adapters.local.minilm_embedder import MiniLmEmbedder
from memory_engine.adapters.local.onnx_embedder import OnnxMiniLmEmbedder
from memory_engine.ports import Embedder

TEXTS = [
    "My cat Mochi was born in Lisbon.",
    "  padded with spaces and a newline\n",
    "제 강아지 이름은 후추예요.",
    "",
    " ".join(["a very long turn that goes on"] * 80),  # past the model's 256-token window
    "short",
]


@pytest.fixture(scope="module")
def onnx() -> OnnxMiniLmEmbedder:
    return OnnxMiniLmEmbedder()


@pytest.fixture(scope="module")
def minilm() -> MiniLmEmbedder:
    return MiniLmEmbedder()


@pytest.fixture(params=["onnx", "minilm"])
def embedder(request: pytest.FixtureRequest) -> Iterator[Embedder]:
    yield request.getfixturevalue(request.param)


def test_every_vector_is_unit_length_with_the_model_dimension(embedder: Embedder) -> None:
    # Given texts of every length, When embedded
    vectors = embedder.embed(TEXTS)

    # Then one unit vector per text, of the model's dimension
    assert [len(vector) for vector in vectors] == [embedder.dimension] * len(TEXTS)
    assert all(math.isclose(math.hypot(*vector), 1.0, rel_tol=1e-5) for vector in vectors)


def test_vectors_come_back_in_input_order_whatever_the_batching(embedder: Embedder) -> None:
    # Given the texts one by one and all at once (batched, sorted by length inside)
    alone = [embedder.embed([text])[0] for text in TEXTS]

    # When embedded together
    together = embedder.embed(TEXTS)

    # Then each text gets its own vector back, in place
    for single, batched in zip(alone, together, strict=True):
        assert max(abs(a - b) for a, b in zip(single, batched, strict=True)) < 1e-5


def test_no_text_gives_no_vector(embedder: Embedder) -> None:
    assert embedder.embed([]) == []


def test_the_onnx_model_gives_the_sentence_transformers_vectors(
    onnx: OnnxMiniLmEmbedder, minilm: MiniLmEmbedder
) -> None:
    # Given the same weights behind both adapters, When both embed the same texts
    expected = minilm.embed(TEXTS)
    got = onnx.embed(TEXTS)

    # Then every component agrees within 1e-5 (truncation and whitespace handling included)
    worst = max(abs(a - b) for e, g in zip(expected, got, strict=True) for a, b in zip(e, g, strict=True))
    assert worst <= 1e-5
