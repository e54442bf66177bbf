"""The digest that keys a model's ONNX graphs in the cache: shared by the BERT encoders and
EmbeddingGemma, which import each other lazily (each names the other's model), so it lives apart."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path


def file_digest(paths: Sequence[Path], extra: bytes = b"") -> str:
    """A short digest of the model's files (and `extra`): its graphs' cache key."""
    digest = hashlib.sha256(extra)
    for path in paths:
        digest.update(path.name.encode())
        with path.open("rb") as handle:  # a megabyte at a time: weights run to 100 MB
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()[:16]
