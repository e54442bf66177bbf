"""Embeddings: the container-image Lambda by default, a SageMaker endpoint by context flag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Template
from pydantic import ValidationError

from infra.config import GEMMA_FOLDER, ROOT, StackConfig
from infra.embedding import Embedding
from infra.lambda_platform import PYTHON_VERSION
from infra.runtime import Runtime
from tests.infra import cfn
from tests.infra.variants import placeholder_layer


def image_functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: body["Properties"]
        for name, body in cfn.resources(template, "AWS::Lambda::Function").items()
        if body["Properties"].get("PackageType") == "Image"
    }


def test_the_default_embedder_is_one_container_image_function(dev: dict[str, Any]) -> None:
    ((_, image),) = image_functions(dev).items()
    assert image["MemorySize"] == 2048
    assert image["Architectures"] == ["x86_64"]
    assert "ImageUri" in image["Code"]


def test_the_image_is_staged_from_the_dockerfile_without_docker_at_synth(dev: dict[str, Any]) -> None:
    ((name, _),) = image_functions(dev).items()
    metadata = dev["Resources"][name]["Metadata"]
    assert metadata["aws:asset:dockerfile-path"] == "functions/embedder_image/Dockerfile"


def test_functions_that_embed_invoke_exactly_the_embedding_function(dev: dict[str, Any]) -> None:
    ((image_id, _),) = image_functions(dev).items()
    for folder in ("retrieve", "embed", "extraction_worker"):
        function = cfn.functions_by_folder(dev)[folder]
        env = cfn.environment(dev, function)
        assert env["MEMORY_ENGINE_EMBEDDER"] == "lambda"
        assert env["MEMORY_ENGINE_EMBEDDING_FUNCTION_NAME"] == {"Ref": image_id}
        invoke = [
            s
            for s in cfn.statements(dev, cfn.role_of(dev, function))
            if "lambda:InvokeFunction" in cfn.actions(s)
        ]
        assert [s["Resource"] for s in invoke] == [f"<{image_id}.Arn>"]


def test_a_sagemaker_endpoint_replaces_the_image_by_context(prod: dict[str, Any]) -> None:
    # Given the prod stack built with embedder=sagemaker, sagemakerEndpoint=Big-Embedder
    assert image_functions(prod) == {}
    function = cfn.functions_by_folder(prod)["retrieve"]
    env = cfn.environment(prod, function)
    # Then the functions are told the endpoint and may invoke it, and only it
    assert env["MEMORY_ENGINE_EMBEDDER"] == "sagemaker"
    assert env["MEMORY_ENGINE_SAGEMAKER_ENDPOINT"] == "Big-Embedder"
    assert env["MEMORY_ENGINE_EMBEDDING_DIMENSION"] == "4096"
    (invoke,) = [
        s
        for s in cfn.statements(prod, cfn.role_of(prod, function))
        if "sagemaker:InvokeEndpoint" in cfn.actions(s)
    ]
    assert cfn.render(invoke["Resource"]).endswith(":endpoint/big-embedder")


def test_the_image_serves_multilingual_e5_unless_told_otherwise(dev: dict[str, Any]) -> None:
    ((name, image),) = image_functions(dev).items()
    metadata = dev["Resources"][name]["Metadata"]
    build_args = metadata["aws:asset:docker-build-args"]
    assert build_args == {"EMBEDDING_MODEL": "e5", "PYTHON_VERSION": PYTHON_VERSION}
    assert image["Description"].startswith("multilingual-e5-small")


def test_an_embedding_dimension_other_than_the_image_models_is_refused() -> None:
    with pytest.raises(ValidationError, match="embeddingDimension 1024 does not match"):
        StackConfig(embedding_dimension=1024)
    assert StackConfig(embedder="sagemaker", sagemaker_endpoint="Big", embedding_dimension=1024)


def test_gemma_gives_the_index_its_dimension_or_its_matryoshka_cut() -> None:
    assert StackConfig(embedding_model="gemma").dimension == 768
    assert StackConfig(embedding_model="gemma", gemma_dimension=256).dimension == 256
    assert StackConfig().dimension == 384
    # an endpoint serving EmbeddingGemma: the same default, unless told its dimension
    endpoint = {"embedder": "sagemaker", "sagemaker_endpoint": "Gemma"}
    assert StackConfig(embedding_model="gemma", **endpoint).dimension == 768
    assert StackConfig(embedding_model="gemma", embedding_dimension=512, **endpoint).dimension == 512


def test_a_gemma_image_with_another_dimension_or_cut_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"embeddingDimension 384 does not match .*gemma: 768"):
        StackConfig(embedding_model="gemma", embedding_dimension=384)
    with pytest.raises(ValidationError, match="gemmaDimension must be one of"):
        StackConfig(embedding_model="gemma", gemma_dimension=300)


def test_the_gemma_image_function_gets_its_cut_and_more_memory(tmp_path: Path) -> None:
    # Given an embedding function synthesized for EmbeddingGemma cut to 256 dimensions
    config = StackConfig(
        embedding_model="gemma", gemma_dimension=256, layer_dir=placeholder_layer(tmp_path / "layer")
    )
    app = App(outdir=str(tmp_path / "out"))
    stack = Stack(app, "EmbeddingOnly")
    Embedding(stack, "Embedding", config=config, runtime=Runtime(stack, "Runtime", config=config))

    # Then its function is told the cut, has 4 GB (more vCPU), and says which model it serves
    ((_, image),) = image_functions(Template.from_stack(stack).to_json()).items()
    variables = image["Environment"]["Variables"]
    assert variables["MEMORY_ENGINE_GEMMA_DIMENSION"] == "256"
    assert variables["MEMORY_ENGINE_EMBEDDING_DIMENSION"] == "256"
    assert image["MemorySize"] == 4096
    assert image["Description"].startswith("EmbeddingGemma-300M")


def test_the_dockerfile_has_a_gemma_stage_that_writes_its_graphs_at_build() -> None:
    dockerfile = (ROOT / "functions" / "embedder_image" / "Dockerfile").read_text()

    assert "FROM runtime AS model-gemma" in dockerfile
    assert f"COPY {GEMMA_FOLDER} /opt/gemma" in dockerfile
    assert "onnx_export --model gemma --source /opt/gemma --out /opt/onnx" in dockerfile
