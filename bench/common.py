"""What every benchmark shares: the machine note, percentiles, the table and the JSON file.

Speed figures are medians over several runs; the machine they ran on is saved beside them because
the project's machine has 2 cores shared with other work, so absolute numbers move from run to
run while ratios measured in the same run (baseline and engine interleaved) move much less.
Every result is written by `save`, which adds the machine and the provenance (`bench.provenance`:
the commit, a digest of the code the benchmark measures, the settings that matter), so a new
benchmark gets them by saving through it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import statistics
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import provenance

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
SHARED_NOTE = "figures move with whatever else runs on the cores: the load average says how busy they were"


def machine() -> dict[str, Any]:
    """The machine and load the figures were measured on."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "load_average_1m": round(load[0], 2),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "note": SHARED_NOTE,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def stamped(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with the time, load and commit it was measured at (rows of one table may come from
    several runs)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        **row,
        "load_average_1m": round(load[0], 2),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": provenance.commit(),
    }


def kept(name: str, field: str, fresh: list[dict[str, Any]], sizes: set[int]) -> list[dict[str, Any]]:
    """The saved rows of `name`'s `field` for sizes not measured now, then `fresh`, by size: a big
    size measured in a later run of its own joins the table instead of replacing it. The run that
    measured the kept rows is remembered, and `save` records it: their code is checked too."""
    path = RESULTS / f"{name}.json"
    saved_before = json.loads(path.read_text()) if path.is_file() else {}
    mine = [row for row in saved_before.get(field, []) if row["memories"] not in sizes]
    if mine:
        _kept_from[name] = provenance.kept_origin(saved_before.get("provenance"))
    return sorted(mine + fresh, key=lambda row: int(row["memories"]))


# name → the provenance of the earlier run whose rows `kept` carried into this run's result.
_kept_from: dict[str, dict[str, Any]] = {}


def saved(name: str, field: str) -> Any:
    """One field of `name`'s saved results, or None."""
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()).get(field) if path.is_file() else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def percentile(samples: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (share in 0..1) of a non-empty sample."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def median(samples: Sequence[float]) -> float:
    return float(statistics.median(samples))


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain-text table, numbers right-aligned."""
    cells = [[_fmt(value) for value in row] for row in rows]
    widths = [
        max(len(h), *(len(row[i]) for row in cells)) if cells else len(h) for i, h in enumerate(headers)
    ]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    for row in cells:
        print("  ".join(value.rjust(w) for value, w in zip(row, widths, strict=True)))
    sys.stdout.flush()


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def save(name: str, payload: dict[str, Any], out: Path | None = None) -> Path:
    """Write bench/results/<name>.json (or `out`) with the machine and the provenance added."""
    path = out or RESULTS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    origin = provenance.record(name)
    if name in _kept_from:
        origin["kept_rows_from"] = _kept_from.pop(name)
    body = {"benchmark": name, "machine": machine(), "provenance": origin, **payload}
    path.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    print(f"saved {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return path


def locomo_path() -> Path | None:
    """../shared/data/locomo-dev.json beside the checkout (or MEMORY_ENGINE_BENCH_DATA), if present."""
    configured = os.environ.get("MEMORY_ENGINE_BENCH_DATA")
    candidates = [Path(configured)] if configured else []
    candidates += [parent / "shared" / "data" / "locomo-dev.json" for parent in ROOT.parents]
    return next((path for path in candidates if path.is_file()), None)


def locomo_questions(count: int, fallback: Callable[[int], str]) -> tuple[list[str], str]:
    """The first `count` LoCoMo dev questions and the file they came from (`question_source`), or,
    without the data, `count` synthetic ones (`fallback(i)`) and "synthetic", said loudly on stderr:
    a checkout with no ../shared (a worktree elsewhere, a fresh clone) would otherwise time other
    queries than its baseline did, and compare the two silently."""
    path = locomo_path()
    gold = path.with_name("locomo-dev-gold.jsonl") if path else None
    if gold is None or not gold.is_file():
        print(
            "warning: no LoCoMo dev questions (../shared/data or MEMORY_ENGINE_BENCH_DATA): timing "
            f"{count} synthetic queries, not comparable with runs on the LoCoMo ones",
            file=sys.stderr,
        )
        return [fallback(i) for i in range(count)], "synthetic"
    text = gold.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    # The file's name and a digest of its content, not its path: results are committed, and the
    # digest is what tells two runs' questions apart.
    return [line["question"] for line in lines[:count]], question_source(gold.name, text)


def question_source(name: str, text: str) -> str:
    return f"{name} (sha256 {hashlib.sha256(text.encode()).hexdigest()[:12]})"


def locomo_turns(data: Path | None = None) -> Iterator[tuple[str, str, str]]:
    """(conversation id, dia_id, "speaker: text") for every turn of a LoCoMo-format file, in order.

    The file is LoCoMo dev (beside the checkout) unless `data` names another one."""
    path = data or locomo_path()
    if path is None:
        return
    for sample in json.loads(path.read_text()):
        conversation = sample["conversation"]
        numbers = sorted(
            int(key.split("_")[1])
            for key in conversation
            if key.startswith("session_") and not key.endswith("date_time")
        )
        for number in numbers:
            for turn in conversation[f"session_{number}"]:
                yield sample["sample_id"], turn["dia_id"], f"{turn['speaker']}: {turn['text']}"
