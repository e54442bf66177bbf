"""Embeddings: the container-image Lambda by default, a SageMaker endpoint by context flag."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from infra.config import StackConfig
from infra.lambda_platform import PYTHON_VERSION
from tests.infra import cfn


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
