"""Serve embeddings from the engine's model."""

from __future__ import annotations

from memory_engine.embedding import embedded_chars
from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput
from memory_engine.models.api import EmbedRequest, EmbedResponse


def run(engine: Engine, request: EmbedRequest) -> EmbedResponse:
    """One vector per text, each text embedded from its first `embed_max_chars` characters. What
    the whole request may cost is bounded too (`embed_request_max_chars`), checked before any
    work: a list of long texts is refused with a 422 naming `text`, not embedded for minutes."""
    single = isinstance(request.text, str)
    texts = [request.text] if isinstance(request.text, str) else request.text
    limits = engine.limits
    total = embedded_chars(texts, limits.embed_max_chars)
    if total > limits.embed_request_max_chars:
        problem = (
            f"the texts would embed {total} characters (each counted up to {limits.embed_max_chars}); "
            f"one request embeds at most {limits.embed_request_max_chars}"
        )
        raise InvalidInput(
            f"Invalid request: text: {problem}. Send fewer or shorter texts per request.",
            [{"field": "text", "message": problem}],
        )
    vectors = engine.embedder.embed(texts, mode=request.mode)
    return EmbedResponse.of(vectors, single=single, dimension=engine.embedder.dimension)
