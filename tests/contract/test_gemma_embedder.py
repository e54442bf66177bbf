"""The Embedder port on EmbeddingGemma-300M (ONNX Runtime, no torch), float32, int8 and a
Matryoshka cut, against sentence-transformers' own vectors of the same model.

Needs the model's folder: `make test-gemma` assembles the evaluation copy and runs this module
with GEMMA_MODEL_DIR pointing at it. Without it every test here is skipped, saying so. The first
run on a machine writes the ONNX graphs into the user cache (about a minute).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder
from memory_engine.composition import wiring
from memory_engine.ports import EmbedMode
from memory_engine.settings import Settings

MODEL_DIR = Path(os.environ.get("GEMMA_MODEL_DIR", "/nonexistent"))
REFERENCE = json.loads((Path(__file__).parent / "data" / "gemma_reference.json").read_text())

pytestmark = pytest.mark.skipif(
    not (MODEL_DIR / "model.safetensors").is_file(),
    reason="EmbeddingGemma's folder is absent: set GEMMA_MODEL_DIR to it, or run `make test-gemma`",
)


@pytest.fixture(scope="module")
def gemma() -> OnnxEmbedder:
    return OnnxEmbedder("gemma", source=MODEL_DIR)


@pytest.fixture(scope="module")
def gemma_int8() -> OnnxEmbedder:
    return OnnxEmbedder("gemma", source=MODEL_DIR, precision="int8")


def _cosines(got: list[list[float]], want: list[list[float]]) -> list[float]:
    return [float(np.dot(a, b) / np.linalg.norm(b)) for a, b in zip(got, want, strict=True)]


@pytest.mark.parametrize("mode", ["query", "passage"])
def test_float32_gives_sentence_transformers_own_vectors(gemma: OnnxEmbedder, mode: EmbedMode) -> None:
    # Given the texts sentence-transformers embedded with the model's prompts (query / document)
    # When the ONNX graph embeds them
    got = gemma.embed(REFERENCE["texts"], mode)

    # Then every vector points the same way (to float32 rounding)
    assert min(_cosines(got, REFERENCE[mode])) > 0.9999


@pytest.mark.parametrize("mode", ["query", "passage"])
def test_int8_stays_close_to_the_model(gemma_int8: OnnxEmbedder, mode: EmbedMode) -> None:
    cosines = _cosines(gemma_int8.embed(REFERENCE["texts"], mode), REFERENCE[mode])

    assert min(cosines) > 0.93
    assert statistics_mean(cosines) > 0.98


def statistics_mean(values: list[float]) -> float:
    return sum(values) / len(values)


def test_vectors_are_unit_length_768_dimensional_and_in_input_order(gemma: OnnxEmbedder) -> None:
    texts = ["  padded  \n", "", "제 강아지 이름은 후추예요.", " ".join(["a long turn"] * 400)]

    together = gemma.embed(texts)
    alone = [gemma.embed([text])[0] for text in texts]

    assert gemma.dimension == 768
    assert [len(v) for v in together] == [768] * len(texts)
    assert all(math.isclose(math.hypot(*v), 1.0, rel_tol=1e-5) for v in together)
    for single, batched in zip(alone, together, strict=True):
        assert max(abs(a - b) for a, b in zip(single, batched, strict=True)) < 1e-4
    assert gemma.embed([]) == []


def test_a_query_is_embedded_with_the_query_prompt_and_a_passage_with_the_document_one(
    gemma: OnnxEmbedder,
) -> None:
    (query,) = gemma.embed(["My cat Mochi was born in Lisbon."], "query")
    (passage,) = gemma.embed(["My cat Mochi was born in Lisbon."], "passage")

    assert 0.5 < float(np.dot(query, passage)) < 0.99


def test_a_matryoshka_cut_is_the_head_of_the_full_vector_renormalised(gemma: OnnxEmbedder) -> None:
    # Given the same model cut to 256 dimensions
    cut = OnnxEmbedder("gemma", source=MODEL_DIR, dimension=256)
    texts = ["My cat Mochi was born in Lisbon.", "나는 땅콩 알레르기가 있어."]

    # Then its vectors are the full ones' first 256 components, of unit length
    full = np.asarray(gemma.embed(texts))[:, :256]
    expected = full / np.linalg.norm(full, axis=1, keepdims=True)
    got = np.asarray(cut.embed(texts))
    assert cut.dimension == 256 and got.shape == (2, 256)
    assert np.abs(got - expected).max() < 1e-5


def test_a_cut_longer_than_the_model_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot be truncated to 1024"):
        OnnxEmbedder("gemma", source=MODEL_DIR, dimension=1024).embed(["x"])


def test_gemma_finds_the_korean_line_that_answers_a_korean_question(gemma: OnnxEmbedder) -> None:
    (question,) = gemma.embed(["못 먹는 음식이 있어?"], "query")
    lines = ["나는 서울에서 태어났어.", "나는 땅콩 알레르기가 있어.", "주말에는 등산을 자주 가."]

    scores = [float(np.dot(question, v)) for v in gemma.embed(lines)]

    assert lines[scores.index(max(scores))] == "나는 땅콩 알레르기가 있어."


def test_the_settings_build_gemma_with_its_folder_precision_and_dimension(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", "gemma")
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDING_MODEL_DIR", str(MODEL_DIR))
    monkeypatch.setenv("MEMORY_ENGINE_GEMMA_DIMENSION", "128")

    embedder = wiring.build_embedder(Settings())

    (vector,) = embedder.embed(["hello"], "query")
    assert embedder.dimension == 128 and len(vector) == 128


def test_gemma_never_imports_torch() -> None:
    # Given a fresh interpreter that builds EmbeddingGemma from the settings and embeds with it
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memory_engine.composition import wiring\n"
        "from memory_engine.settings import Settings\n"
        "wiring.build_embedder(Settings()).embed(['hello'], 'query')\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMORY_ENGINE_")},
        "MEMORY_ENGINE_EMBEDDER": "gemma",
        "MEMORY_ENGINE_EMBEDDING_MODEL_DIR": str(MODEL_DIR),
    }
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)

    # Then neither torch nor transformers was ever loaded
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_an_emoji_heavy_text_is_embedded_from_no_more_tokens_than_its_characters() -> None:
    # Given texts at the engine's character cap in scripts Gemma's tokenizer spends most on
    from memory_engine.adapters.local.gemma import MAX_TOKENS, GemmaEncoder
    from memory_engine.embedding import capped

    encoder = GemmaEncoder(MODEL_DIR)
    heavy = capped("🧑🏽‍🚀🫶🏾𓀀𓂀ꙮ" * 2_000, Settings().embed_max_chars)
    uncut = encoder.tokenizer.encode(heavy, add_special_tokens=False).ids
    assert len(uncut) > len(heavy)  # the tokenizer's own count: past one token per character

    # When they are tokenized for the model
    for mode in ("query", "passage"):
        (ids,) = encoder.token_ids([heavy], mode)  # type: ignore[arg-type]
        (short,) = encoder.token_ids([heavy[:40]], mode)  # type: ignore[arg-type]
        prompt = len(encoder.tokenizer.encode(encoder.prompts[mode], add_special_tokens=False).ids)

        # Then no text costs more tokens than characters, nor more than the model's context
        assert len(ids) <= min(MAX_TOKENS, prompt + len(heavy))
        assert len(short) <= prompt + 40


def test_ordinary_text_keeps_every_token() -> None:
    from memory_engine.adapters.local.gemma import GemmaEncoder

    encoder = GemmaEncoder(MODEL_DIR)
    text = "Caroline went to the support group on 7 May 2023 and felt accepted. 지훈이는 부산에 갔어. " * 20

    (ids,) = encoder.token_ids([text], "passage")

    full = encoder.tokenizer.encode(encoder.prompts["passage"] + text.strip(), add_special_tokens=False).ids
    assert ids == full
