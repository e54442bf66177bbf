"""The Embedder port on every in-process model: multilingual-e5-small (the default) and
all-MiniLM-L6-v2, both on ONNX Runtime, float32 and int8.

Loads the real weights (and writes their ONNX graphs once per machine, into the user cache, if
that was never done): slower than the other contract tests, so each model loads once per module.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder
from memory_engine.ports import Embedder, EmbedMode

TEXTS = [
    "My cat Mochi was born in Lisbon.",
    "  padded with spaces and a newline\n",
    "제 강아지 이름은 후추예요.",
    "",
    " ".join(["a very long turn that goes on"] * 80),  # past MiniLM's 256-token window
    "short",
]


@pytest.fixture(scope="module")
def e5() -> OnnxEmbedder:
    return OnnxEmbedder("e5")


@pytest.fixture(scope="module")
def e5_int8() -> OnnxEmbedder:
    return OnnxEmbedder("e5", precision="int8")


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    return OnnxEmbedder("minilm")


@pytest.fixture(params=["e5", "e5_int8", "minilm"])
def embedder(request: pytest.FixtureRequest) -> Iterator[OnnxEmbedder]:
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


def test_e5_has_384_dimensions_whatever_the_mode(e5: Embedder) -> None:
    assert e5.dimension == 384
    short = ["short", "제 강아지 이름은 후추예요."]
    assert {len(v) for v in e5.embed(short, mode="query") + e5.embed(short, mode="passage")} == {384}


def test_e5_embeds_a_query_otherwise_than_a_passage(e5: Embedder) -> None:
    # Given one text, When embedded as a query ("query: " prefix) and as a passage ("passage: ")
    (query,) = e5.embed(["제 강아지 이름은 후추예요."], mode="query")
    (passage,) = e5.embed(["제 강아지 이름은 후추예요."], mode="passage")

    # Then the instruction prefix changed the vector, though the meaning keeps them close
    cosine = sum(a * b for a, b in zip(query, passage, strict=True))
    assert 0.8 < cosine < 0.999


def test_minilm_embeds_a_query_as_a_passage(minilm: Embedder) -> None:
    # Given a model trained without instructions, Then both modes encode the text as it is
    (query,) = minilm.embed(["My cat Mochi was born in Lisbon."], mode="query")
    (passage,) = minilm.embed(["My cat Mochi was born in Lisbon."], mode="passage")

    assert max(abs(a - b) for a, b in zip(query, passage, strict=True)) < 1e-6


def test_surrounding_whitespace_does_not_change_a_vector(embedder: Embedder) -> None:
    padded, plain = embedder.embed(
        ["  My cat Mochi was born in Lisbon.\n", "My cat Mochi was born in Lisbon."]
    )
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


def test_minilm_finds_the_english_line_that_answers_an_english_question(minilm: Embedder) -> None:
    (question,) = minilm.embed(["Which food can't I eat?"], mode="query")
    lines = ["I was born in Seoul.", "I am allergic to peanuts.", "I often hike at weekends."]

    scores = [sum(a * b for a, b in zip(question, v, strict=True)) for v in minilm.embed(lines)]

    assert lines[scores.index(max(scores))] == "I am allergic to peanuts."


def test_a_clone_is_a_separate_copy_that_gives_the_same_vectors(embedder: OnnxEmbedder) -> None:
    # Given an embedder that has embedded, and its clone
    original = embedder.embed(TEXTS[:3], "passage")
    copy = embedder.clone()

    # Then the clone is another object of the same model, with the same vectors in both modes
    assert copy is not embedder
    assert copy.dimension == embedder.dimension
    for got, want in zip(copy.embed(TEXTS[:3], "passage"), original, strict=True):
        assert math.isclose(sum(a * b for a, b in zip(got, want, strict=True)), 1.0, abs_tol=1e-5)
    query = embedder.embed(["where was Mochi born?"], "query")[0]
    cloned_query = copy.embed(["where was Mochi born?"], "query")[0]
    assert math.isclose(sum(a * b for a, b in zip(query, cloned_query, strict=True)), 1.0, abs_tol=1e-5)


def test_a_clone_shares_the_encoder_but_runs_a_session_of_its_own(e5: OnnxEmbedder) -> None:
    # Given the e5 embedder, loaded, and its clone, loaded
    e5.embed(["warm"])
    copy = e5.clone()
    copy.embed(["warm"])

    # Then the ~300 MB tokenizer exists once, while each has its own inference session
    (model, session), (copy_model, copy_session) = e5._load(), copy._load()
    assert copy_model is model
    assert copy_session is not session
