"""`Embedder` that calls a model served elsewhere: the embedding container Lambda, or SageMaker.

The wire format is the embedding function's (functions/embedder_image): request
`{"texts": [...], "mode": "query"|"passage"}`, answer `{"embeddings": [[...], ...], "dimension": N}`.
A SageMaker endpoint gets the same request body as JSON and may answer that shape or a bare list
of vectors (`request_shape="engine"`), or, with `request_shape="tei"`, the request of Hugging
Face's Text Embeddings Inference container, `{"inputs": [...], "truncate": true}`, answered by a
bare list of vectors (a stock SageMaker embedding endpoint; no query/passage prefix is added).
Texts go in batches (the payload limits of Lambda are 6 MB each way: 64 texts of 4096 floats is
about 3 MB of JSON). The dimension comes from configuration and every answer is checked against
it, so a model swap without a reindex fails loudly instead of mixing spaces.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from memory_engine.adapters.aws.clients import aws_errors, client, unavailable
from memory_engine.adapters.encoding import unit_vector
from memory_engine.errors import InvalidInput
from memory_engine.ports import EmbedMode

RequestShape = Literal["engine", "tei"]


class RemoteEmbedder:
    def __init__(
        self,
        dimension: int,
        function_name: str | None = None,
        sagemaker_endpoint: str | None = None,
        batch_size: int = 64,
        region: str | None = None,
        aws_client: Any = None,
        request_shape: RequestShape = "engine",
    ) -> None:
        if (function_name is None) == (sagemaker_endpoint is None):
            raise ValueError("give exactly one of function_name and sagemaker_endpoint")
        self._dimension = dimension
        self._function_name = function_name
        self._endpoint = sagemaker_endpoint
        self._batch_size = max(1, batch_size)
        self._region = region
        self._client = aws_client
        self._shape: RequestShape = request_shape if sagemaker_endpoint else "engine"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def target(self) -> str:
        """The function or endpoint, for the log only: a caller's error names neither (docs/security.md,
        Errors and logs)."""
        return (
            f"Lambda function {self._function_name}"
            if self._function_name
            else f"SageMaker endpoint {self._endpoint}"
        )

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = client("lambda" if self._function_name else "sagemaker-runtime", self._region)
        return self._client

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            answer = self._call(self._request(batch, mode))
            vectors.extend(self._checked(answer, len(batch)))
        return vectors

    def _request(self, texts: list[str], mode: EmbedMode) -> dict[str, Any]:
        if self._shape == "tei":
            # TEI cuts a text past the model's window instead of refusing the batch (413).
            return {"inputs": texts, "truncate": True}
        return {"texts": texts, "mode": mode}

    def _call(self, request: dict[str, Any]) -> Any:
        payload = json.dumps(request, ensure_ascii=False).encode()
        with aws_errors(
            "The embedding model", "Check MEMORY_ENGINE_EMBEDDER and its target.", resource=self.target
        ):
            if self._function_name:
                response = self.client.invoke(FunctionName=self._function_name, Payload=payload)
                body = response["Payload"].read()
                if response.get("FunctionError"):
                    # The body is the function's error and stack trace: for the log only (in debug, as
                    # its message may quote the texts).
                    kind = f"FunctionError {response['FunctionError']}"
                    message = f"The embedding model failed ({response['FunctionError']}); retry shortly."
                    detail = body.decode(errors="replace")[:2000]
                    raise unavailable(message, self.target, detail, safe_detail=kind)
            else:
                response = self.client.invoke_endpoint(
                    EndpointName=self._endpoint,
                    ContentType="application/json",
                    Accept="application/json",
                    Body=payload,
                )
                body = response["Body"].read()
        answer = json.loads(body)
        if isinstance(answer, dict) and "error" in answer:
            # The function's own validation message, which names the field (functions/embedder_image).
            raise InvalidInput(f"The embedding model refused the texts: {answer['error']}")
        return answer

    def _checked(self, answer: Any, expected: int) -> list[list[float]]:
        vectors = answer.get("embeddings") if isinstance(answer, dict) else answer
        if not isinstance(vectors, list) or len(vectors) != expected:
            message = (
                f"The embedding model answered {type(vectors).__name__} instead of {expected} embeddings."
            )
            raise unavailable(message, self.target, type(vectors).__name__)
        wrong = {len(vector) for vector in vectors} - {self._dimension}
        if wrong:
            message = (
                f"The embedding model returns {sorted(wrong)[0]}-dimensional embeddings but the engine "
                f"is configured for {self._dimension} (MEMORY_ENGINE_EMBEDDING_DIMENSION); align them, "
                "then rebuild the index."
            )
            raise unavailable(message, self.target, f"dimension {sorted(wrong)[0]}")
        return [unit_vector(vector) for vector in vectors]
