"""The embedding function: the model in a container image, invoked by the remote embedder.

Not an HTTP route (the public `POST /v1/engine/embed/` is `functions/embed`): the engine's other
functions call it with Lambda Invoke, `{"texts": [...], "mode": "query"|"passage"}`, and get
`{"embeddings": [[...], ...], "dimension": N}`; a request it cannot read gets `{"error": "..."}`.
The image (Dockerfile beside this file) holds the model; nothing is downloaded at run time.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from memory_engine.composition import wiring
from memory_engine.edge.logsafe import logger
from memory_engine.models.messages import EmbeddingInvocation
from memory_engine.ports import Embedder
from memory_engine.settings import EmbeddingSettings, loaded
from memory_engine.usecases import embed_batch


@lru_cache(maxsize=1)
def embedder() -> Embedder:
    """The in-process model, loaded on the first invocation (the image bakes it in)."""
    settings = loaded(EmbeddingSettings)
    if settings.embedder not in {"e5", "minilm", "gemma"}:
        # This function *is* the remote model: pointing it at another one would call itself.
        raise RuntimeError(
            "The embedding function serves the in-process model: set MEMORY_ENGINE_EMBEDDER=e5 "
            "(the image's default), MEMORY_ENGINE_EMBEDDER=minilm or MEMORY_ENGINE_EMBEDDER=gemma."
        )
    return wiring.build_embedder(settings)


@logger().inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        request = EmbeddingInvocation.model_validate(event)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in error.errors())
        return {"error": f"Invalid embedding request: {problems}. Send texts (1 to 256 strings) and a mode."}
    return embed_batch.run(embedder(), request).model_dump()
