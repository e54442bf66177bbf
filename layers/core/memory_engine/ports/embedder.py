"""The embedder port: texts to unit vectors, embedded as a query or as a passage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

EmbedMode = Literal["query", "passage"]


class Embedder(Protocol):
    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        """Unit-normalised vectors, one per text, in order."""
        ...


@runtime_checkable
class CopyableEmbedder(Protocol):
    """An in-process model that can give a thread its own session of the same model."""

    def clone(self) -> Embedder:
        """The same model in a session of its own, loaded on first use by the thread using it."""
        ...
