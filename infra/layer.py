"""`make layer`: the core Lambda layer, built without Docker.

`python -m infra.layer build/layer` fills `build/layer/python/` with the `memory_engine` package
and the runtime dependencies of its `aws` and `llm` extras, as Lambda's Linux wheels (pip with
`--only-binary=:all:`, the runtime's Python version and every manylinux tag its glibc runs, from
`infra.lambda_platform`), then byte-compiles them when this Python is the runtime's, so cold
starts skip compiling. It refuses a layer holding torch or numpy: the API functions stay small,
and only the embedding image carries the model. It rebuilds only when pyproject.toml or the
package's sources changed (`--force` to rebuild anyway).
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import py_compile
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


def build(layer_dir: Path, force: bool = False) -> Path:
    reqs = requirements()
    stamp = layer_dir / FINGERPRINT
    wanted = fingerprint(reqs)
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
    if sys.version_info[:2] == tuple(int(part) for part in PYTHON_VERSION.split(".")):
        # Unchecked-hash .pyc files stay valid whatever mtimes the zip gives the sources.
        compileall.compile_dir(site, quiet=1, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    megabytes = size_mb(site)
    if megabytes > MAX_UNZIPPED_MB:
        raise SystemExit(f"the layer is {megabytes:.0f} MB unzipped, over {MAX_UNZIPPED_MB} MB")
    stamp.write_text(wanted)
    print(f"layer built: {site} ({megabytes:.0f} MB unzipped)")
    return site


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m infra.layer", description=__doc__)
    parser.add_argument("layer_dir", nargs="?", default=str(ROOT / "build" / "layer"))
    parser.add_argument("--force", action="store_true", help="rebuild even when nothing changed")
    args = parser.parse_args(argv)
    build(Path(args.layer_dir), force=args.force)


if __name__ == "__main__":
    main()
