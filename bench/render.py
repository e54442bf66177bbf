"""Markdown from a saved result of any shape: where and when it was measured, and its figures.

`bench.report` uses these for every result file without a table of its own (a benchmark added
later is shown as it saved itself), and the tables of its own for the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

# Keys that say how a result was made, not what it measured: shown in the provenance line or not at all.
META = {
    "benchmark",
    "machine",
    "provenance",
    "measured_at",
    "recorded",
    "date",
    "note",
    "command",
    "cpus",
    "python",
    "numpy",
}
MAX_ROWS = 40


def provenance(result: dict[str, Any]) -> str:
    """The machine and date a result was measured on, in whichever form its benchmark saved them."""
    machine = result.get("machine")
    load = result.get("load_average_1m")
    when = result.get("recorded") or result.get("date") or result.get("measured_at")
    if isinstance(machine, dict) and "cores" in machine:
        where = f"{machine['cores']} cores ({machine.get('cpu', 'CPU not recorded')})"
        load = machine.get("load_average_1m", load)
        when = when or machine.get("measured_at")
    elif isinstance(machine, str):
        where = machine if "core" in machine or "cpus" not in result else f"{machine}, {result['cpus']} cores"
    elif isinstance(machine, dict):
        where = machine.get("note") or machine.get("platform", "")
    else:
        where = ""
    parts = [where] if where else []
    if load is not None:
        parts.append(f"1-min load {load}")
    parts.append(f"measured {_date(when)}" if when else "date not recorded")
    if made := commit_of(result):
        parts[-1] += f" at {made}"
    return "; ".join(parts)


def commit_of(result: dict[str, Any]) -> str | None:
    """The commit a result was measured at, `+` where its measured code had uncommitted changes."""
    origin = result.get("provenance")
    if not isinstance(origin, dict) or not origin.get("commit"):
        return None
    return str(origin["commit"]) + ("+" if origin.get("uncommitted") else "")


def day(result: dict[str, Any]) -> str | None:
    """The date a result was measured on, YYYY-MM-DD."""
    machine = result.get("machine")
    when = result.get("recorded") or result.get("date") or result.get("measured_at")
    if not when and isinstance(machine, dict):
        when = machine.get("measured_at")
    return _date(when)[:10] if isinstance(when, str) and when else None


def short_path(path: str) -> str:
    """A measured path as the docs name it: the core's modules without their folder."""
    return path.removeprefix("layers/core/memory_engine/")


def _date(value: str) -> str:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return value


def cell(value: Any) -> str:
    """One table cell: numbers rounded for reading, a small mapping inline, a long list counted."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"
    if value is None:
        return "—"
    if isinstance(value, dict):
        return ", ".join(f"{key} {cell(inner)}" for key, inner in value.items())
    if isinstance(value, list):
        return ", ".join(cell(item) for item in value) if len(value) <= 6 else f"{len(value)} values"
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return lines


def _plain(value: Any) -> bool:
    return not isinstance(value, dict | list) or (
        isinstance(value, list) and len(value) <= 6 and not any(isinstance(x, dict | list) for x in value)
    )


def _is_scalar(value: Any) -> bool:
    """Fits in one cell: a number or word, a short list of them, or a mapping of them."""
    return _plain(value) or (isinstance(value, dict) and all(_plain(inner) for inner in value.values()))


def _records(rows: Sequence[dict[str, Any]]) -> list[str]:
    columns = [key for key in dict.fromkeys(k for row in rows for k in row) if key not in META]
    columns = [key for key in columns if all(_is_scalar(row.get(key)) for row in rows)]
    shown = rows[:MAX_ROWS]
    lines = table(
        [key.replace("_", " ") for key in columns], ([row.get(key) for key in columns] for row in shown)
    )
    if len(rows) > MAX_ROWS:
        lines.append(f"\n(the first {MAX_ROWS} of {len(rows)} rows; all of them in the JSON file)")
    return lines


def generic(result: dict[str, Any], depth: int = 0) -> list[str]:
    """Every figure of a result: its scalars in one line, then a table per list of records, per
    mapping of records (one row per key) and per mapping of numbers."""
    lines: list[str] = []
    scalars = {
        key: value for key, value in result.items() if key not in META and not isinstance(value, dict | list)
    }
    if scalars:
        lines += [
            "; ".join(f"{key.replace('_', ' ')}: {cell(value)}" for key, value in scalars.items()) + ".",
            "",
        ]
    for key, value in result.items():
        if key in META or not isinstance(value, dict | list) or not value:
            continue
        if key == "runs":  # the medians above are the figures; each run's stay in the JSON file
            lines += ["Each run's figures: in the JSON file.", ""]
            continue
        title = f"**{key.replace('_', ' ')}**"
        if isinstance(value, list) and all(isinstance(row, dict) for row in value):
            lines += [title, "", *_records(value), ""]
        elif isinstance(value, list):
            lines += [f"{title}: {cell(value)}", ""]
        elif all(_plain(inner) for inner in value.values()):
            lines += [
                title,
                "",
                *table(["", "value"], ((k.replace("_", " "), v) for k, v in value.items())),
                "",
            ]
        elif all(isinstance(inner, dict) for inner in value.values()) and all(
            all(_is_scalar(x) for x in inner.values()) for inner in value.values()
        ):
            lines += [title, "", *_records([{"": name, **inner} for name, inner in value.items()]), ""]
        elif depth < 1:
            lines += [title, "", *generic(value, depth + 1)]
    return lines
