"""The speed benchmarks' queries: LoCoMo dev questions when the data is there, and a loud,
recorded fallback when it is not (a checkout without ../shared must not time other queries
than its baseline silently)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import common


def test_questions_come_from_the_gold_file_beside_the_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given LoCoMo data whose gold file holds three questions
    data = tmp_path / "locomo-dev.json"
    data.write_text("[]")
    gold = tmp_path / "locomo-dev-gold.jsonl"
    gold.write_text("".join(json.dumps({"question": f"q{n}?"}) + "\n" for n in range(3)))
    monkeypatch.setattr(common, "locomo_path", lambda: data)

    # When two are asked for
    questions, source = common.locomo_questions(2, lambda i: f"synthetic {i}")

    # Then they are the first two, the source names the file, and nothing is said
    assert questions == ["q0?", "q1?"]
    assert source == common.question_source("locomo-dev-gold.jsonl", gold.read_text())
    assert str(tmp_path) not in source  # committed results name no machine's paths
    assert capsys.readouterr().err == ""


def test_without_the_data_the_fallback_is_used_and_said(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(common, "locomo_path", lambda: None)

    questions, source = common.locomo_questions(3, lambda i: f"synthetic {i}")

    assert questions == ["synthetic 0", "synthetic 1", "synthetic 2"]
    assert source == "synthetic"
    assert "synthetic queries" in capsys.readouterr().err
