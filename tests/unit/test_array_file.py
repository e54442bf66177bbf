"""The local index's shard files: named arrays and string columns, refused when damaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory_engine.adapters.local.array_file import ArrayFileError, read_arrays, write_arrays


def _written(path: Path) -> list[int]:
    return write_arrays(
        path,
        {"ints": np.arange(10, dtype=np.int32), "matrix": np.ones((3, 4), dtype=np.float32)},
        {"ascii": ["a", "bc", ""], "wide": ["café", "🙂", "x"], "nul": ["a\x00b", "c"], "none": []},
    )


def test_arrays_and_strings_come_back_as_written(tmp_path: Path) -> None:
    size, crc = _written(tmp_path / "f.arrays")

    arrays, strings = read_arrays(tmp_path / "f.arrays", size, crc)

    assert arrays["ints"].tolist() == list(range(10))
    assert arrays["matrix"].shape == (3, 4) and arrays["matrix"].dtype == np.float32
    assert strings == {
        "ascii": ["a", "bc", ""],
        "wide": ["café", "🙂", "x"],
        "nul": ["a\x00b", "c"],
        "none": [],
    }


def test_an_array_can_be_updated_in_place_without_changing_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f.arrays"
    size, crc = _written(path)
    before = path.read_bytes()

    arrays, _ = read_arrays(path, size, crc)
    arrays["ints"][0] = 99

    assert arrays["ints"][0] == 99
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage", ["truncated", "grown", "flipped", "deleted"])
def test_a_damaged_array_file_is_refused(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "f.arrays"
    size, crc = _written(path)
    data = bytearray(path.read_bytes())
    if damage == "truncated":
        path.write_bytes(data[: size - 1])
    elif damage == "grown":
        path.write_bytes(data + b"\0")
    elif damage == "flipped":
        data[size // 2] ^= 0x01
        path.write_bytes(bytes(data))
    else:
        path.unlink()

    with pytest.raises(ArrayFileError):
        read_arrays(path, size, crc)


def test_a_file_of_another_kind_with_a_matching_checksum_is_refused(tmp_path: Path) -> None:
    import zlib

    path = tmp_path / "f.arrays"
    path.write_bytes(b"not an array file at all")

    with pytest.raises(ArrayFileError):
        read_arrays(path, path.stat().st_size, zlib.crc32(path.read_bytes()))
