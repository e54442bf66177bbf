"""Builders of the embedding models, unbounded (`wiring.build_embedder` bounds whichever it is).

The ONNX Runtime models (e5, MiniLM, EmbeddingGemma) run in process; the remote ones call a
Lambda function or a SageMaker endpoint. Each builder imports its adapter itself: the two
families share no dependency. A provider with settings of its own brings them (`GemmaSettings`,
`LambdaEmbedderSettings`, `SageMakerEmbedderSettings`), read from the environment when it is
chosen: `EmbeddingSettings` holds what every model shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from memory_engine.settings import EmbeddingSettings, Piece

if TYPE_CHECKING:
    from memory_engine.adapters.aws.remote_embedder import RemoteEmbedder, RequestShape
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder


def e5(settings: EmbeddingSettings) -> OnnxEmbedder:
    return _onnx("e5", settings)


def minilm(settings: EmbeddingSettings) -> OnnxEmbedder:
    return _onnx("minilm", settings)


class LambdaEmbedderSettings(Piece):
    """MEMORY_ENGINE_EMBEDDER=lambda: the function that embeds (the stack's embedder image)."""

    embedding_function_name: str | None = None

    def missing_variables(self) -> list[tuple[str, str]]:
        missing = super().missing_variables()
        if not self.embedding_function_name:
            missing.append(
                ("MEMORY_ENGINE_EMBEDDING_FUNCTION_NAME", "needed by MEMORY_ENGINE_EMBEDDER=lambda")
            )
        return missing


class SageMakerEmbedderSettings(Piece):
    """MEMORY_ENGINE_EMBEDDER=sagemaker: the endpoint that embeds."""

    sagemaker_endpoint: str | None = None
    # The endpoint's request shape: `engine` ({"texts", "mode"} → {"embeddings"} or a list, the
    # embedding image's), or `tei` ({"inputs", "truncate"} → a list of vectors: Hugging Face's
    # Text Embeddings Inference container, as SageMaker's stock embedding models serve it).
    sagemaker_request: Literal["engine", "tei"] = "engine"

    def missing_variables(self) -> list[tuple[str, str]]:
        missing = super().missing_variables()
        if not self.sagemaker_endpoint:
            missing.append(("MEMORY_ENGINE_SAGEMAKER_ENDPOINT", "needed by MEMORY_ENGINE_EMBEDDER=sagemaker"))
        return missing


# The dimensions EmbeddingGemma was trained to be cut to (Matryoshka representation learning).
GEMMA_DIMENSIONS = (768, 512, 256, 128)


class GemmaSettings(Piece):
    """MEMORY_ENGINE_EMBEDDER=gemma: what only EmbeddingGemma has (its weights' folder is the
    shared MEMORY_ENGINE_EMBEDDING_MODEL_DIR, which MiniLM reads too)."""

    # Its vectors cut to their first this many components and renormalised (Matryoshka: trained
    # for each of these); a smaller index, and a little less recall.
    gemma_dimension: int = Field(768, description="EmbeddingGemma's dimension: 768, 512, 256 or 128")

    @field_validator("gemma_dimension")
    @classmethod
    def _a_trained_cut(cls, value: int) -> int:
        if value not in GEMMA_DIMENSIONS:
            raise ValueError(
                f"MEMORY_ENGINE_GEMMA_DIMENSION must be one of {', '.join(map(str, GEMMA_DIMENSIONS))} "
                f"(EmbeddingGemma's Matryoshka dimensions), not {value}"
            )
        return value


def gemma(settings: EmbeddingSettings) -> OnnxEmbedder:
    return _onnx("gemma", settings, dimension=GemmaSettings().gemma_dimension)


def lambda_function(settings: EmbeddingSettings) -> RemoteEmbedder:
    return _remote(settings, function_name=LambdaEmbedderSettings().embedding_function_name)


def sagemaker_endpoint(settings: EmbeddingSettings) -> RemoteEmbedder:
    endpoint = SageMakerEmbedderSettings()
    return _remote(settings, sagemaker_endpoint=endpoint.sagemaker_endpoint, shape=endpoint.sagemaker_request)


def _onnx(
    model: Literal["e5", "minilm", "gemma"], settings: EmbeddingSettings, dimension: int | None = None
) -> OnnxEmbedder:
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(
        model,
        onnx_dir=settings.embedding_onnx_dir,
        source=settings.embedding_model_dir,
        batch_size=settings.embedding_batch_size,
        threads=settings.embedding_threads,
        precision=settings.embedding_precision,
        dimension=dimension,
    )


def _remote(
    settings: EmbeddingSettings,
    function_name: str | None = None,
    sagemaker_endpoint: str | None = None,
    shape: RequestShape = "engine",
) -> RemoteEmbedder:
    from memory_engine.adapters.aws.remote_embedder import RemoteEmbedder

    return RemoteEmbedder(
        dimension=settings.embedding_dimension,
        function_name=function_name,
        sagemaker_endpoint=sagemaker_endpoint,
        batch_size=settings.embedding_batch_size,
        region=settings.aws_region,
        request_shape=shape,
    )
