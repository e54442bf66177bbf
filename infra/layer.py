"""`make layer`: the core Lambda layer, built without Docker.

`python -m infra.layer build/layer` fills `build/layer/python/` with the `memory_engine` package
and the runtime dependencies of its `aws` and `llm` extras, as Lambda's Linux wheels (pip with
`--only-binary=:all:`, the runtime's Python version and every manylinux tag its glibc runs, from
`infra.lambda_platform`), then byte-compiles them with an interpreter of the runtime's Python
version (this one if it is; else MEMORY_ENGINE_LAYER_PYTHON, or `python3.12` on PATH, or one that
pyenv or uv installed beside another default; none found stops the build unless `--no-bytecode`),
so cold starts skip compiling (about 2 s). It refuses a
layer holding torch or numpy: the API functions stay small, and only the embedding image carries
the model. It rebuilds only when pyproject.toml or the package's sources changed (`--force` to
rebuild anyway).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

from infra.config import ROOT
from infra.lambda_platform import LAMBDA, PYTHON_VERSION

EXTRAS = ("aws", "llm")
FORBIDDEN = ("torch", "numpy", "sentence_transformers", "transformers", "scipy")
MAX_UNZIPPED_MB = 200  # Lambda allows 250 MB for function + layers; keep room for the function
PACKAGE = ROOT / "layers" / "core" / "memory_engine"
FINGERPRINT = ".fingerprint"
LAYER_PYTHON_VARIABLE = "MEMORY_ENGINE_LAYER_PYTHON"


def requirements(pyproject: Path = ROOT / "pyproject.toml", extras: Sequence[str] = EXTRAS) -> list[str]:
    """The project's runtime dependencies plus those of the given extras, as pip arguments."""
    project = tomllib.loads(pyproject.read_text())["project"]
    optional = project.get("optional-dependencies", {})
    missing = [extra for extra in extras if extra not in optional]
    if missing:
        raise SystemExit(f"pyproject.toml has no extra named {missing}")
    return [*project["dependencies"], *(req for extra in extras for req in optional[extra])]


def pip_command(target: Path, reqs: Sequence[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-compile",
        "--target",
        str(target),
        *platform_arguments(LAMBDA.platform_tags),
        "--implementation",
        "cp",
        "--python-version",
        PYTHON_VERSION,
        "--only-binary=:all:",
        *reqs,
    ]


def platform_arguments(tags: Sequence[str]) -> list[str]:
    """`--platform` once per tag: pip takes each tag literally, never the older ones it implies."""
    return [argument for tag in tags for argument in ("--platform", tag)]


def forbidden_found(site: Path) -> list[str]:
    """Top-level packages of the layer that must not be there (heavy ML dependencies)."""
    return sorted(name for name in FORBIDDEN if (site / name).exists())


def size_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6


def fingerprint(reqs: Sequence[str]) -> str:
    digest = hashlib.sha256("\n".join([LAMBDA.platform_tag, PYTHON_VERSION, *reqs]).encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def build(layer_dir: Path, force: bool = False, bytecode: bool = True) -> Path:
    python = runtime_python() if bytecode else None
    if bytecode and python is None:
        raise SystemExit(NO_RUNTIME_PYTHON)
    reqs = requirements()
    stamp = layer_dir / FINGERPRINT
    wanted = fingerprint(reqs) + (" bytecode" if bytecode else "")
    site = layer_dir / "python"
    if not force and stamp.exists() and stamp.read_text() == wanted and site.is_dir():
        print(f"layer up to date: {site}")
        return site
    shutil.rmtree(layer_dir, ignore_errors=True)
    site.mkdir(parents=True)
    subprocess.run(pip_command(site, reqs), check=True)
    shutil.copytree(PACKAGE, site / "memory_engine", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    heavy = forbidden_found(site)
    if heavy:
        raise SystemExit(f"the layer must not hold {heavy}: keep them out of the core's aws/llm extras")
    if bytecode:
        assert python is not None
        subprocess.run(compile_command(python, site), check=True)
    megabytes = size_mb(site)
    if megabytes > MAX_UNZIPPED_MB:
        raise SystemExit(f"the layer is {megabytes:.0f} MB unzipped, over {MAX_UNZIPPED_MB} MB")
    stamp.write_text(wanted)
    print(f"layer built: {site} ({megabytes:.0f} MB unzipped)")
    return site


NO_RUNTIME_PYTHON = (
    f"the layer's bytecode must be compiled by Python {PYTHON_VERSION}, the functions' runtime "
    f"(another version's .pyc files are ignored, and each cold start compiles again, ~2 s), and "
    f"none was found (python{PYTHON_VERSION} on PATH, pyenv's or uv's {PYTHON_VERSION}): install "
    f"one (`pyenv install {PYTHON_VERSION}` or `uv python install {PYTHON_VERSION}`; it need not be "
    f"the default), name one in {LAYER_PYTHON_VARIABLE}, or build with `--no-bytecode` "
    "(make layer LAYER_FLAGS=--no-bytecode) to ship none"
)


def installed_pythons(home: Path | None = None) -> list[str]:
    """Interpreters of the runtime's version that pyenv or uv installed, newest first: a shim on
    PATH answers only for the version pyenv is set to, so they are looked up where they live."""
    home = home or Path.home()
    pyenv = Path(os.environ.get("PYENV_ROOT") or home / ".pyenv")
    uv = Path(os.environ.get("UV_PYTHON_INSTALL_DIR") or home / ".local" / "share" / "uv" / "python")
    found = [
        *pyenv.glob(f"versions/{PYTHON_VERSION}.*/bin/python{PYTHON_VERSION}"),
        *uv.glob(f"cpython-{PYTHON_VERSION}.*/bin/python{PYTHON_VERSION}"),
    ]
    return [str(path) for path in sorted(found, key=_patch_level, reverse=True)]


def _patch_level(path: Path) -> tuple[int, ...]:
    folder = next(part for part in path.parts if part.startswith((f"{PYTHON_VERSION}.", "cpython-")))
    numbers = folder.removeprefix("cpython-").split("-")[0].split(".")
    return tuple(int(number) for number in numbers if number.isdigit())


def runtime_python(candidates: Sequence[str] | None = None) -> str | None:
    """An interpreter of the runtime's Python version: this one, MEMORY_ENGINE_LAYER_PYTHON, or
    `python3.12` on PATH, then pyenv's and uv's, the first that runs and says it is that version."""
    if candidates is None:
        if sys.version_info[:2] == _version(PYTHON_VERSION):
            return sys.executable
        named = os.environ.get(LAYER_PYTHON_VARIABLE)
        candidates = [named] if named else [f"python{PYTHON_VERSION}", *installed_pythons()]
    for candidate in candidates:
        found = shutil.which(candidate)
        if found and _reports(found) == PYTHON_VERSION:
            return found
    return None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _reports(python: str) -> str:
    """The major.minor an interpreter says it is ("" when it does not run: a pyenv shim of a
    version not installed, say)."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def compile_command(python: str, site: Path) -> list[str]:
    """Byte-compile the layer. Unchecked-hash .pyc files stay valid whatever mtimes the zip gives
    the sources."""
    return [python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(site)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m infra.layer", description=__doc__)
    parser.add_argument("layer_dir", nargs="?", default=str(ROOT / "build" / "layer"))
    parser.add_argument("--force", action="store_true", help="rebuild even when nothing changed")
    parser.add_argument("--no-bytecode", action="store_true", help="ship no .pyc (slower cold starts)")
    args = parser.parse_args(argv)
    build(Path(args.layer_dir), force=args.force, bytecode=not args.no_bytecode)


if __name__ == "__main__":
    main()
