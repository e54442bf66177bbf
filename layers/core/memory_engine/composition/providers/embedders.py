"""Builders of the embedding models, unbounded (`wiring.build_embedder` bounds whichever it is).

The ONNX Runtime models run in process; the remote ones call a Lambda function or a SageMaker
endpoint. Each builder imports its adapter itself: the two families share no dependency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from memory_engine.settings import EmbeddingSettings

if TYPE_CHECKING:
    from memory_engine.adapters.aws.remote_embedder import RemoteEmbedder
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder


def e5(settings: EmbeddingSettings) -> OnnxEmbedder:
    return _onnx("e5", settings)


def minilm(settings: EmbeddingSettings) -> OnnxEmbedder:
    return _onnx("minilm", settings)


def lambda_function(settings: EmbeddingSettings) -> RemoteEmbedder:
    return _remote(settings, function_name=settings.embedding_function_name)


def sagemaker_endpoint(settings: EmbeddingSettings) -> RemoteEmbedder:
    return _remote(settings, sagemaker_endpoint=settings.sagemaker_endpoint)


def _onnx(model: Literal["e5", "minilm"], settings: EmbeddingSettings) -> OnnxEmbedder:
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(
        model,
        onnx_dir=settings.embedding_onnx_dir,
        source=settings.embedding_model_dir,
        batch_size=settings.embedding_batch_size,
        threads=settings.embedding_threads,
        precision=settings.embedding_precision,
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
