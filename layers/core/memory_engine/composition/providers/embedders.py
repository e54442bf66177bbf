"""Builders of the embedding models, unbounded (`wiring.build_embedder` bounds whichever it is).

The ONNX Runtime models (e5, MiniLM, EmbeddingGemma) run in process; the remote ones call a
Lambda function or a SageMaker endpoint. Each builder imports its adapter itself: the two
families share no dependency. A remote provider brings its own settings (`LambdaEmbedderSettings`,
`SageMakerEmbedderSettings`), read from the environment when it is chosen: `EmbeddingSettings`
holds what every model shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from memory_engine.settings import EmbeddingSettings, Piece

if TYPE_CHECKING:
    from memory_engine.adapters.aws.remote_embedder import RemoteEmbedder
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

    def missing_variables(self) -> list[tuple[str, str]]:
        missing = super().missing_variables()
        if not self.sagemaker_endpoint:
            missing.append(("MEMORY_ENGINE_SAGEMAKER_ENDPOINT", "needed by MEMORY_ENGINE_EMBEDDER=sagemaker"))
        return missing


def gemma(settings: EmbeddingSettings) -> OnnxEmbedder:
    return _onnx("gemma", settings, dimension=settings.gemma_dimension)


def lambda_function(settings: EmbeddingSettings) -> RemoteEmbedder:
    return _remote(settings, function_name=LambdaEmbedderSettings().embedding_function_name)


def sagemaker_endpoint(settings: EmbeddingSettings) -> RemoteEmbedder:
    return _remote(settings, sagemaker_endpoint=SageMakerEmbedderSettings().sagemaker_endpoint)


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
    settings: EmbeddingSettings, function_name: str | None = None, sagemaker_endpoint: str | None = None
) -> RemoteEmbedder:
    from memory_engine.adapters.aws.remote_embedder import RemoteEmbedder

    return RemoteEmbedder(
        dimension=settings.embedding_dimension,
        function_name=function_name,
        sagemaker_endpoint=sagemaker_endpoint,
        batch_size=settings.embedding_batch_size,
        region=settings.aws_region,
    )
