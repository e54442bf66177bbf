"""The embedder port: texts to unit vectors, embedded as a query or as a passage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

EmbedMode = Literal["query", "passage"]


class Embedder(Protocol):
    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        """Unit-normalised vectors, one per text, in order."""
        ...
