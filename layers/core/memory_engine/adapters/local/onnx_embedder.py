"""all-MiniLM-L6-v2 (or any mean-pooled sentence-transformers model) on ONNX Runtime: no torch.

The graph comes from `memory_engine.adapters.local.onnx_export` (transformer + mean pooling + L2 norm in
one graph). Given no folder, the export is cached per model fingerprint under the user's cache
(`$XDG_CACHE_HOME/memory-engine/onnx/`) and made on first use from the packaged weights, which
needs torch once; the embedding Lambda ships a folder exported at image build time instead.

Texts are tokenized all at once (Rust, `tokenizers`), sorted by token count and cut into batches,
so each batch pads only to its own longest text: mixed lengths cost what they hold, not what the
longest text of the call holds. numpy, onnxruntime and tokenizers are imported on first use.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from threading import Lock
from typing import TYPE_CHECKING, Any

from memory_engine.adapters.local.onnx_export import GRAPH, MANIFEST, TOKENIZER, default_onnx_dir, export
from memory_engine.adapters.local.ort_session import cpu_session
from memory_engine.errors import Unavailable
from memory_engine.ports import EmbedMode

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger("memory_engine.embedder")

__all__ = ["OnnxMiniLmEmbedder", "default_onnx_dir"]

# Padded tokens per model call. Small batches keep the activations (and the attention scores,
# quadratic in length) in cache; measured on 2 cores, 256-512 beat batches of 64-128 texts
# by ~2x at equal padding (bench/embedding.py).
BATCH_TOKENS = 512


class _Loaded:
    """The session, tokenizer and manifest of one exported folder."""

    def __init__(self, folder: Path, threads: int) -> None:
        try:
            from tokenizers import Tokenizer

            self.session = cpu_session(folder / GRAPH, threads)
        except ImportError as error:  # pragma: no cover - install problem, reported clearly
            raise Unavailable(
                "The ONNX embedder needs onnxruntime and tokenizers: pip install 'memory-engine[local]', "
                "or set MEMORY_ENGINE_EMBEDDER=minilm."
            ) from error
        self.manifest: dict[str, Any] = json.loads((folder / MANIFEST).read_text())
        self.inputs: list[str] = list(self.manifest["inputs"])
        self.dimension = int(self.manifest["dimension"])
        self.lower = bool(self.manifest.get("do_lower_case", False))
        tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
        tokenizer.enable_truncation(int(self.manifest["max_length"]))
        tokenizer.no_padding()  # the packaged tokenizer.json pads to 128; batches pad themselves
        self.tokenizer = tokenizer


class OnnxMiniLmEmbedder:
    """The `Embedder` port on ONNX Runtime; loads (and if need be exports) on first use."""

    def __init__(
        self,
        onnx_dir: Path | None = None,
        model_dir: Path | None = None,
        batch_size: int = 64,
        threads: int = 0,
        batch_tokens: int = BATCH_TOKENS,
    ) -> None:
        self._onnx_dir = onnx_dir
        self._model_dir = model_dir
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
                self._state = _Loaded(self._folder(), self._threads)
                self.load_seconds = time.perf_counter() - started
            return self._state

    def clone(self) -> OnnxMiniLmEmbedder:
        """The same model in a session of its own, loaded on first use (see OnnxE5Embedder.clone)."""
        return OnnxMiniLmEmbedder(
            self._onnx_dir, self._model_dir, self._batch_size, self._threads, self._batch_tokens
        )

    def _folder(self) -> Path:
        folder = self._onnx_dir
        if folder is not None and (folder / MANIFEST).is_file():
            return folder
        model_dir = self._model_dir or _packaged_model_dir()
        folder = folder or default_onnx_dir(model_dir)
        if not (folder / MANIFEST).is_file():
            log.warning("no ONNX export of %s yet: exporting it to %s (once; needs torch)", model_dir, folder)
            try:
                export(model_dir, folder)
            except ImportError as error:
                raise Unavailable(
                    f"No ONNX model in {folder}, and exporting one needs torch, sentence-transformers "
                    "and onnx: pip install 'memory-engine[local]', or run `python -m "
                    "memory_engine.adapters.local.onnx_export --out <folder>` where they are installed."
                ) from error
        return folder

    @property
    def dimension(self) -> int:
        return self._loaded().dimension

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        # MiniLM has no query/passage instructions: both modes encode the text as it is.
        if not texts:
            return []
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """The vectors as one (len(texts), dimension) float32 array, in input order."""
        import numpy as np

        state = self._loaded()
        # sentence-transformers strips each text before tokenizing; so do we, for equal vectors.
        cleaned = [text.strip().lower() if state.lower else text.strip() for text in texts]
        encodings = state.tokenizer.encode_batch(cleaned)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.intp, count=len(encodings))
        order = np.argsort(-lengths, kind="stable")
        out = np.empty((len(texts), state.dimension), dtype=np.float32)
        start = 0
        while start < len(order):
            width = int(lengths[order[start]])  # sorted longest first: the batch's own longest
            size = max(1, min(self._batch_size, self._batch_tokens // width))
            rows = order[start : start + size]
            start += size
            ids = np.zeros((len(rows), width), dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros_like(ids)
            for row, index in enumerate(rows):
                encoding = encodings[index]
                size = len(encoding.ids)
                ids[row, :size] = encoding.ids
                types[row, :size] = encoding.type_ids
                mask[row, :size] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            out[rows] = state.session.run(None, {name: feed[name] for name in state.inputs})[0]
        return out


def _packaged_model_dir() -> Path:
    from memory_engine.adapters.local.minilm_embedder import packaged_model_dir

    return packaged_model_dir()
