"""`make bench` re-measures every figure the targets table states (issue 46: `restart` and
`concurrency` fed targets but were not in it)."""

from __future__ import annotations

import re
from pathlib import Path

from bench import entries, report

ROOT = Path(__file__).resolve().parents[2]


def _bench_recipe() -> str:
    text = (ROOT / "Makefile").read_text()
    match = re.search(r"^bench:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert match, "no `bench:` target in the Makefile"
    return match.group(1)


def test_every_result_a_target_cites_is_measured_by_make_bench() -> None:
    # Given the results the targets table takes its figures from, and each one's command
    cited = sorted({row[4] for row in report.targets(report.results())})
    commands = {entry.name: entry.command for _, part in entries.PARTS for entry in part}
    assert "cold_start" in cited and "retrieve_latency" in cited

    # When the `bench` target's recipe is read
    recipe = _bench_recipe()

    # Then each cited result's benchmark module runs in it
    missing = [name for name in cited if commands[name].split()[2] not in recipe]
    assert missing == []
