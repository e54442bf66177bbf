"""What the layer and the embedding image install resolves, as wheels, for the platform they run on.

Each artifact is resolved once by pip (`--dry-run --only-binary=:all:` for its manylinux tags and
Python version: see infra/artifacts.py); the answer is kept a day in pytest's cache, keyed by the
requirements, the platform and pip's version, so a rerun costs nothing and a new release on PyPI
is seen the next day. Needs PyPI: skipped, saying so, where it cannot be reached.
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.request
from pathlib import Path

import pytest
from pip import __version__ as PIP_VERSION

from infra import artifacts
from infra.artifacts import IMAGE_STAGES, LAYER, Artifact, Resolution
from infra.lambda_platform import LAMBDA, PYTHON_VERSION, Base

CACHE_SECONDS = 24 * 3600
PYPI = "https://pypi.org/simple/pip/"
# Lambda's python3.11 image: Amazon Linux 2, glibc 2.26 (the base this project shipped before).
AMAZON_LINUX_2 = Base("public.ecr.aws/lambda/python:3.11", "3.11", (2, 26))


def _pypi_reachable() -> bool:
    try:
        with urllib.request.urlopen(PYPI, timeout=10):
            return True
    except OSError:
        return False


def resolution(
    cache: pytest.Cache, tmp_path: Path, requirements: list[str], base: Base, constraints: Path | None = None
) -> Resolution:
    """pip's resolution, from the cache when the same question was asked today."""
    pins = constraints.read_text() if constraints else ""
    question = json.dumps([requirements, base.platform_tags, base.python_version, PIP_VERSION, pins])
    key = "memory-engine/artifacts/" + hashlib.sha256(question.encode()).hexdigest()[:24]
    cached = cache.get(key, None)
    if cached and time.time() - cached["at"] < CACHE_SECONDS:
        return Resolution(cached["wheels"], cached["error"])
    if not _pypi_reachable():
        pytest.skip(f"PyPI ({PYPI}) cannot be reached: the artifact resolution needs it")
    found = artifacts.resolve(requirements, base, tmp_path, constraints)
    cache.set(key, {"at": time.time(), "wheels": found.wheels, "error": found.error})
    return found


def resolved(request: pytest.FixtureRequest, tmp_path: Path, artifact: Artifact) -> Resolution:
    assert request.config.cache is not None
    return resolution(
        request.config.cache, tmp_path, artifact.requirements(), artifact.base, artifact.constraints
    )


@pytest.mark.parametrize("artifact", artifacts.artifacts(), ids=lambda artifact: artifact.name)
def test_every_artifact_installs_as_wheels_built_for_its_base(
    artifact: Artifact, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # When pip resolves what the artifact installs for its base's glibc and Python
    found = resolved(request, tmp_path, artifact)
    # Then every requirement has a wheel that runs there
    assert found.ok, f"{artifact.name} on {artifact.base.image}:\n{found.error}"
    assert found.wheels


@pytest.mark.parametrize("artifact", [LAYER, IMAGE_STAGES["runtime"]], ids=lambda a: a.name)
def test_what_a_function_runs_resolves_no_torch_and_nothing_forbidden(
    artifact: Artifact, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    found = resolved(request, tmp_path, artifact)
    assert found.ok, found.error
    assert not set(found.wheels) & set(artifact.forbidden)


def test_the_embedding_function_resolves_onnx_runtime_with_a_wheel_amazon_linux_2023_runs(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    found = resolved(request, tmp_path, IMAGE_STAGES["runtime"])
    wheel = found.wheels["onnxruntime"]
    # Then the wheel's newest manylinux tag is one of the base's
    tags = {tag for tag in wheel.removesuffix(".whl").split("-")[-1].split(".")}
    assert tags & set(LAMBDA.platform_tags), wheel


def test_the_image_on_amazon_linux_2_with_python_3_11_fails_on_onnx_runtime(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # Given the function stage's requirements on the base this image used to have (glibc 2.26)
    assert request.config.cache is not None
    stage = IMAGE_STAGES["runtime"]
    # When pip resolves them for that platform
    found = resolution(request.config.cache, tmp_path, stage.requirements(), AMAZON_LINUX_2)
    # Then it finds no wheel of onnxruntime ≥ 1.18 (they need glibc 2.27 or 2.28)
    assert not found.ok
    assert "onnxruntime" in found.error


def test_the_dockerfile_stages_are_the_ones_resolved_here() -> None:
    # Given the Dockerfile with its ARG defaults filled in
    stages = artifacts.dockerfile_stages(artifacts.DOCKERFILE.read_text())
    # Then each stage starts from its artifact's base image and installs its extras
    assert {name: (image, tuple(extras)) for name, (image, extras) in stages.items()} == {
        name: (artifact.base.image, artifact.extras) for name, artifact in IMAGE_STAGES.items()
    }


def test_the_dockerfile_defaults_to_the_runtimes_python_version() -> None:
    assert artifacts.python_version_default(artifacts.DOCKERFILE.read_text()) == PYTHON_VERSION


def test_amazon_linux_2023_runs_manylinux_2_34_and_every_older_tag() -> None:
    tags = LAMBDA.platform_tags
    assert tags[0] == "manylinux_2_34_x86_64"
    assert {"manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"} <= set(tags)
    assert "manylinux_2_35_x86_64" not in tags


def test_the_image_installs_exactly_its_pinned_versions(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # Given the image's install stage, resolved under its constraints file
    stage = IMAGE_STAGES["runtime"]
    assert stage.constraints is not None
    found = resolved(request, tmp_path, stage)
    assert found.ok, f"the pins no longer resolve for {stage.base.image}:\n{found.error}"
    # Then every distribution it installs is pinned there, at the version installed
    pins = artifacts.read_constraints(stage.constraints)
    versions = {artifacts.normalised(name): version for name, version in found.versions.items()}
    assert {name: pins.get(name) for name in versions} == versions
    # and no pin is left over from a dependency the image no longer has
    assert set(pins) == set(versions)


def test_the_dockerfile_installs_under_the_constraints_it_copies() -> None:
    text = artifacts.DOCKERFILE.read_text()
    ignore = artifacts.DOCKERFILE.with_name("Dockerfile.dockerignore").read_text().splitlines()
    assert 'pip install --no-cache-dir -c /build/constraints.txt "/build[embed]"' in text
    assert "functions/embedder_image/constraints.txt /build/" in text
    # The build context sends what the COPY lines and the licence fields of pyproject.toml need
    assert {"!functions/embedder_image/constraints.txt", "!LICENSE", "!pyproject.toml"} <= set(ignore)
