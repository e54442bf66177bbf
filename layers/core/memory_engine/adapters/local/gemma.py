"""EmbeddingGemma-300M as an encoder of the ONNX embedder (`encoders.py`), from its
sentence-transformers folder: no torch, no transformers.

The folder is the official release (config.json, model.safetensors, tokenizer.json,
config_sentence_transformers.json, 2_Dense/ and 3_Dense/); the operator points
MEMORY_ENGINE_EMBEDDING_MODEL_DIR at it. Texts are embedded with the model's own prompts, read from
its config ("task: search result | query: " for a query, "title: none | text: " for a document).

The 262,144-row word table (805 MB in float32) stays in the file: its rows are read through a
memory map, so only the rows of the tokens met are ever in memory; the rest of the weights go into
the graph (`gemma_onnx.py`).

A long text is cut into windows of `WINDOW` tokens whose means are averaged, as e5's are: a turn or
a memory fits in one, where the vector is the model's own (sentence-transformers would read up to
2,048 tokens at once; the embedder caps texts at MEMORY_ENGINE_EMBED_MAX_CHARS long before).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from memory_engine.adapters.local.gemma_onnx import GemmaShape, gemma_graph
from memory_engine.errors import Unavailable
from memory_engine.ports import EmbedMode

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["GemmaEncoder", "configured_gemma_dir", "token_cap"]

# Tokens per model call, <bos> and <eos> included: what the model computes for a text of up to
# that many tokens (its sliding layers' band included); attention costs the square of the window,
# and a turn is rarely past 200 tokens.
WINDOW = 512
# The most tokens a text is embedded from, its prompt included: the context EmbeddingGemma was
# trained for (sentence-transformers' max_seq_length), 4 windows.
MAX_TOKENS = 2_048
# The graph's own version, part of its cache key: a change to gemma_onnx.py bumps it, so graphs
# written by an older engine are written again.
GRAPH_VERSION = 2
_FILES = (
    "config.json",
    "config_sentence_transformers.json",
    "tokenizer.json",
    "model.safetensors",
    "2_Dense/model.safetensors",
    "3_Dense/model.safetensors",
)


def configured_gemma_dir() -> Path:
    raise Unavailable(
        "MEMORY_ENGINE_EMBEDDER=gemma needs EmbeddingGemma-300M's sentence-transformers folder: "
        "set MEMORY_ENGINE_EMBEDDING_MODEL_DIR to it (docs/configuration.md#embeddinggemma; "
        "`make gemma-model` assembles an evaluation copy)."
    )


class _SafeTensors:
    """A safetensors file's tensors as numpy arrays mapped from the file (read on access)."""

    _DTYPES: ClassVar[dict[str, str]] = {"F32": "<f4", "F16": "<f2"}

    def __init__(self, path: Path) -> None:
        import numpy as np

        with path.open("rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            header = json.loads(handle.read(length))
        header.pop("__metadata__", None)
        self._map = np.memmap(path, dtype=np.uint8, mode="r")
        self._base = 8 + length
        self._header: dict[str, Any] = header

    def __call__(self, name: str) -> NDArray[np.float32]:
        import numpy as np

        entry = self._header[name]
        dtype = self._DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ValueError(f"{name} is {entry['dtype']}; the engine reads float32 or float16 weights")
        start, end = entry["data_offsets"]
        tensor = self._map[self._base + start : self._base + end].view(dtype).reshape(entry["shape"])
        # float16 weights (a smaller copy of the model) are widened: the graph runs in float32.
        return tensor if dtype == "<f4" else tensor.astype(np.float32)


class GemmaEncoder:
    """EmbeddingGemma-300M from its sentence-transformers folder."""

    name = "gemma"
    windowed = True

    def __init__(self, folder: Path) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        self.folder = folder
        missing = [name for name in _FILES if not (folder / name).is_file()]
        if missing:
            raise Unavailable(
                f"{folder} is not EmbeddingGemma's sentence-transformers folder: it has no "
                + ", ".join(missing)
                + " (MEMORY_ENGINE_EMBEDDING_MODEL_DIR, docs/configuration.md#embeddinggemma)"
            )
        config = json.loads((folder / "config.json").read_text())
        layers = int(config["num_hidden_layers"])
        layer_types = config.get("layer_types") or [
            "full_attention"
            if (i + 1) % int(config.get("_sliding_window_pattern", 6)) == 0
            else "sliding_attention"
            for i in range(layers)
        ]
        self.shape = GemmaShape(
            hidden=int(config["hidden_size"]),
            layers=layers,
            heads=int(config["num_attention_heads"]),
            kv_heads=int(config["num_key_value_heads"]),
            head_dim=int(config["head_dim"]),
            eps=float(config["rms_norm_eps"]),
            max_positions=int(config["max_position_embeddings"]),
            query_pre_attn_scalar=float(config["query_pre_attn_scalar"]),
            rope_theta=float(config["rope_theta"]),
            rope_local_theta=float(config["rope_local_base_freq"]),
            sliding_window=int(config["sliding_window"]),
            sliding=tuple(kind == "sliding_attention" for kind in layer_types),
        )
        prompts = json.loads((folder / "config_sentence_transformers.json").read_text())["prompts"]
        self.prompts: dict[EmbedMode, str] = {"query": prompts["query"], "passage": prompts["document"]}
        self._weights = _SafeTensors(folder / "model.safetensors")
        self._table = self._weights("embed_tokens.weight")
        # The two dense layers (768 -> 3072 -> 768, no bias, no activation) are one linear map.
        first = _SafeTensors(folder / "2_Dense/model.safetensors")("linear.weight").astype(np.float64)
        second = _SafeTensors(folder / "3_Dense/model.safetensors")("linear.weight").astype(np.float64)
        self.projection = (first.T @ second.T).astype(np.float32)
        self.dimension = int(self.projection.shape[1])
        self.window = min(WINDOW, self.shape.max_positions) - 2
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self.tokenizer = tokenizer
        self.bos, self.eos, self.pad = (_token_id(tokenizer, token) for token in ("<bos>", "<eos>", "<pad>"))
        self._fingerprint: str | None = None

    def fingerprint(self) -> str:
        """The graphs' cache key: a digest of the small files, and of the weights' size and
        modification time (hashing 1.2 GB would add seconds to every start; weights replaced in
        place get a new time, so their graphs are written again)."""
        if self._fingerprint is None:
            from memory_engine.adapters.local.digests import file_digest

            small = [self.folder / name for name in _FILES if not name.endswith("model.safetensors")]
            stamps = [(self.folder / name).stat() for name in _FILES if name.endswith("model.safetensors")]
            stamp = ",".join(f"{entry.st_size}:{entry.st_mtime_ns}" for entry in stamps)
            self._fingerprint = file_digest(small, extra=f"graph {GRAPH_VERSION}; {stamp}".encode())
        return self._fingerprint

    def graph(self) -> Any:
        # A bidirectional sliding layer's token sees those less than `sliding_window // 2 + 1`
        # away: transformers' Gemma3TextConfig halves the window when use_bidirectional_attention
        # is on (257 tokens for this model), so a window of 512 tokens meets the band.
        return gemma_graph(self.shape, self._weights, self.projection, self.shape.sliding_window // 2 + 1)

    def token_ids(self, texts: Sequence[str], mode: EmbedMode) -> list[list[int]]:
        prompt = self.prompts[mode]
        stripped = [text.strip() for text in texts]
        encodings = self.tokenizer.encode_batch(
            [prompt + text for text in stripped], add_special_tokens=False
        )
        head = len(self.tokenizer.encode(prompt, add_special_tokens=False).ids)
        return [
            token_cap(encoding.ids, len(text), head)
            for encoding, text in zip(encodings, stripped, strict=True)
        ]

    def word_rows(self, ids: NDArray[np.int64]) -> NDArray[np.float32]:
        import numpy as np

        return np.asarray(self._table[ids], dtype=np.float32)


def token_cap(ids: list[int], chars: int, prompt_tokens: int) -> list[int]:
    """A text's token ids (its prompt's first) cut, by the tokenizer's count, to at most one token
    per character of the text and to `MAX_TOKENS` in all.

    The engine's embed bounds count characters (MEMORY_ENGINE_EMBED_MAX_CHARS per text,
    ..._REQUEST_MAX_CHARS per request), sized on e5's and MiniLM's tokenizers, which give at most
    about one token per character. Gemma's gives up to ~4 on emoji and rare scripts (byte
    fallback), so a text of 2,048 such characters would be ~8,000 tokens: past the model's context
    and 4x the time the bounds promise. Ordinary text is far below one token per character
    (~0.25 in English, under 1 in Korean), so its vector is the model's own, uncut."""
    return ids[: min(MAX_TOKENS, prompt_tokens + max(chars, 1))]


def _token_id(tokenizer: Any, token: str) -> int:
    found = tokenizer.token_to_id(token)
    if found is None:
        raise ValueError(f"the tokenizer has no {token} token: not a Gemma vocabulary")
    return int(found)
