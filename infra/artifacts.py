"""What each deployed artifact installs, and on which platform: the core layer and the stages of
the embedding image (functions/embedder_image/Dockerfile).

`tests/infra/test_artifacts.py` asks pip to resolve each one for its platform
(`pip install --dry-run --only-binary=:all: --platform <its manylinux tags> --python-version
<its Python>`), so a base image whose C library is too old for a wheel fails a test here instead
of `docker build` or a cold start on AWS; it also checks the Dockerfile's FROM lines and pip
extras against the stages below.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infra import layer
from infra.lambda_platform import LAMBDA, Base

DOCKERFILE = Path(__file__).resolve().parents[1] / "functions" / "embedder_image" / "Dockerfile"
# Every distribution the image installs, pinned (`pip install -c`): a later release (an sdist
# only, say, that would need a compiler the base lacks) changes nothing until this file does.
# `make image-constraints` writes it from pip's resolution for the image's platform.
IMAGE_CONSTRAINTS = DOCKERFILE.parent / "constraints.txt"
# What no stage of the image may hold: the model's graphs are written from its weights with onnx.
NO_TORCH = ("torch", "sentence-transformers", "transformers")


@dataclass(frozen=True)
class Artifact:
    """One thing pip installs for a deployment, on one base."""

    name: str
    base: Base
    extras: tuple[str, ...]  # the project's extras the stage installs ("/build[...]")
    forbidden: tuple[str, ...] = ()  # distributions that must not be resolved into it
    constraints: Path | None = None  # the pins it installs under (`pip install -c`)

    def requirements(self) -> list[str]:
        """The project's own dependencies and its extras': what `pip install "/build[...]"` pulls."""
        return layer.requirements(extras=self.extras)


# The Dockerfile's stages by name; the layer is built by infra/layer.py.
# (The model stages build on `runtime`: they write the graphs, and MiniLM's adds its weights'
# package with --no-deps.)
IMAGE_STAGES: dict[str, Artifact] = {
    "runtime": Artifact("image stage runtime", LAMBDA, ("embed",), NO_TORCH, IMAGE_CONSTRAINTS),
}
LAYER = Artifact(
    "core layer", LAMBDA, layer.EXTRAS, tuple(name.replace("_", "-") for name in layer.FORBIDDEN)
)


def artifacts() -> list[Artifact]:
    return [LAYER, *IMAGE_STAGES.values()]


def dry_run_command(
    requirements: Sequence[str], base: Base, report: Path, constraints: Path | None = None
) -> list[str]:
    """pip's resolution of `requirements` for `base`, written to `report` (nothing installed)."""
    pins = ["--constraint", str(constraints)] if constraints else []
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--quiet",
        "--ignore-installed",
        "--only-binary=:all:",
        *layer.platform_arguments(base.platform_tags),
        "--implementation",
        "cp",
        "--python-version",
        base.python_version,
        "--report",
        str(report),
        *pins,
        *requirements,
    ]


@dataclass(frozen=True)
class Resolution:
    """pip's answer: the wheels it would install (name → file), or why it found none."""

    wheels: dict[str, str]
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def versions(self) -> dict[str, str]:
        """Name → version, read from each wheel's file name (`name-version-tags.whl`)."""
        return {name: wheel.split("-")[1] for name, wheel in self.wheels.items()}


def resolve(
    requirements: Sequence[str], base: Base, workdir: Path, constraints: Path | None = None
) -> Resolution:
    """Resolve with pip (needs PyPI); a failure keeps pip's own words."""
    report = workdir / "report.json"
    done = subprocess.run(
        dry_run_command(requirements, base, report, constraints), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
        return Resolution({}, "\n".join(errors) or done.stderr[-2000:])
    installed = json.loads(report.read_text())["install"]
    return Resolution(
        {
            item["metadata"]["name"].lower(): item["download_info"]["url"].rsplit("/", 1)[-1]
            for item in installed
        }
    )


def dockerfile_stages(text: str) -> dict[str, tuple[str, list[str]]]:
    """Stage name → (its FROM image with the ARG defaults filled in, the extras it pip-installs)."""
    defaults: dict[str, str] = {}
    stages: dict[str, tuple[str, list[str]]] = {}
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("ARG ") and "=" in line and not stages:
            name, _, value = line[4:].partition("=")
            defaults[name.strip()] = value.strip()
        elif line.startswith("FROM "):
            words = line.split()
            image = words[1]
            for name, value in defaults.items():
                image = image.replace("${" + name + "}", value)
            current = words[3] if len(words) == 4 and words[2].upper() == "AS" else ""
            if image in stages:  # FROM an earlier stage: it builds on that stage's install
                current = ""
            if current:
                stages[current] = (image, [])
        elif current and '"/build[' in line:
            extras = line.split('"/build[', 1)[1].split("]", 1)[0]
            stages[current][1].extend(extra.strip() for extra in extras.split(","))
    return stages


def python_version_default(text: str) -> str:
    """The Dockerfile's `ARG PYTHON_VERSION=` default."""
    for line in text.splitlines():
        if line.startswith("ARG PYTHON_VERSION="):
            return line.split("=", 1)[1].strip()
    return ""


def read_constraints(path: Path) -> dict[str, str]:
    """`name==version` lines (comments and blanks skipped) as normalised name → version."""
    pins: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, pinned = line.partition("==")
            pins[normalised(name)] = pinned.strip()
    return pins


def normalised(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503)."""
    return "-".join(part for part in name.lower().replace("_", "-").replace(".", "-").split("-") if part)


def write_constraints(workdir: Path) -> Path:
    """Pin what the image's install stage resolves to today, for its platform (needs PyPI)."""
    stage = IMAGE_STAGES["runtime"]
    found = resolve(stage.requirements(), stage.base, workdir)
    if not found.ok:
        raise SystemExit(found.error)
    lines = [f"{name}=={version}" for name, version in sorted(found.versions.items())]
    header = (
        "# What the embedding image installs, pinned (functions/embedder_image/Dockerfile: pip install -c).\n"
        f"# Resolved for {stage.base.image} (Python {stage.base.python_version})"
        " by `make image-constraints`;\n"
        "# tests/infra/test_artifacts.py resolves the image under these pins.\n"
    )
    IMAGE_CONSTRAINTS.write_text(header + "\n".join(lines) + "\n")
    return IMAGE_CONSTRAINTS


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        print(write_constraints(Path(folder)))
