"""Both ONNX exports (MiniLM, e5) write into `onnx_export.staged`: a finished export replaces the
folder whole, a failed one leaves the old folder and no staging files behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_engine.adapters.local.onnx_export import MANIFEST, staged


def test_a_finished_export_replaces_the_folder_whole(tmp_path: Path) -> None:
    out = tmp_path / "export"
    out.mkdir()
    (out / "stale.onnx").write_text("old")

    with staged(out) as staging:
        (staging / MANIFEST).write_text("{}")

    assert sorted(p.name for p in out.iterdir()) == [MANIFEST]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]  # no staging or old folder left


def test_a_failed_export_keeps_the_old_folder_and_leaves_no_staging(tmp_path: Path) -> None:
    out = tmp_path / "export"
    out.mkdir()
    (out / MANIFEST).write_text("old")

    with pytest.raises(RuntimeError), staged(out) as staging:
        (staging / "half.onnx").write_text("partial")
        raise RuntimeError("export failed")

    assert (out / MANIFEST).read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]
