"""Embed a batch of texts for another component (the embedding function's one job)."""

from __future__ import annotations

from memory_engine.models.messages import EmbeddingInvocation, EmbeddingResult
from memory_engine.ports import Embedder


def run(embedder: Embedder, request: EmbeddingInvocation) -> EmbeddingResult:
    vectors = embedder.embed(request.texts, mode=request.mode)
    return EmbeddingResult(embeddings=vectors, dimension=len(vectors[0]) if vectors else embedder.dimension)
