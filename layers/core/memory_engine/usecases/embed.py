"""Serve embeddings from the engine's model."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.models.api import EmbedRequest, EmbedResponse


def run(engine: Engine, request: EmbedRequest) -> EmbedResponse:
    single = isinstance(request.text, str)
    texts = [request.text] if isinstance(request.text, str) else request.text
    vectors = engine.embedder.embed(texts, mode=request.mode)
    return EmbedResponse.of(vectors, single=single, dimension=engine.embedder.dimension)
