"""docs/performance.md, the README's figures and aws.md's costs, generated from bench/results/*.json.

    python -m bench.report            # rewrite both from the saved results
    python -m bench.report --check    # exit 1, naming the file, while either is stale

Reads only the saved results, so the docs quote exactly what the benchmarks saved. A result file
with no entry below still gets a section (`bench.render.generic`), so a new benchmark's figures
show up as soon as it saves them; an entry says what the benchmark measures and gives its own table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.common import RESULTS, ROOT
from bench.entries import PARTS, Entry
from bench.experiments.tables import cost
from bench.render import generic, provenance, table
from bench.speed.tables import first_start

PAGE = ROOT / "docs" / "performance.md"
README = ROOT / "README.md"
AWS = ROOT / "docs" / "aws.md"
COMMAND = "python -m bench.report"

# The targets' names as the benchmarks save them, in words; a name not here is shown as saved.
LABELS = {
    "p95_ms_at_100k": "retrieve p95 at 100k memories, ms",
    "p95_growth_10k_to_100k": "retrieve p95 growth, 10k → 100k memories",
    "ann_recall_at_10_worst": "ANN recall@10 against the exact scan, worst",
    "restart_s_at_100k": "restart to the first retrieve at 100k memories, s",
    "peak_rss_gb_at_100k": "peak RSS at 100k memories, GB",
}


def results(folder: Path = RESULTS) -> dict[str, dict[str, Any]]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def section(entry: Entry, result: dict[str, Any]) -> list[str]:
    try:
        body = entry.render(result)
    except (KeyError, TypeError, IndexError) as error:  # a benchmark saved another shape: show it as saved
        print(f"{entry.name}: its own table failed ({error!r}); shown as saved", file=sys.stderr)
        body = generic(result)
    head = [f"### {entry.title}", "", entry.about, "", f"`{entry.command}` · {provenance(result)}", ""]
    plot = RESULTS / f"{entry.name}.png"  # a benchmark that draws its figures saves them beside the JSON
    drawn = [f"![{entry.title}](../bench/results/{plot.name})", ""] if plot.is_file() else []
    return [*head, *body, "", *drawn]


def _unlisted(name: str, result: dict[str, Any]) -> Entry:
    found = sorted((ROOT / "bench").glob(f"*/{name}.py"))
    command = f"python -m bench.{found[0].parent.name}.{name}" if found else result.get("command", "—")
    return Entry(
        name, name.replace("_", " "), f"`bench/results/{name}.json`, as its benchmark saved it.", command
    )


def targets(saved: dict[str, dict[str, Any]]) -> list[list[str]]:
    """Every target a result states, with its figure: `targets` maps, and the ones ingest,
    concurrency and cold start save in their own shape."""
    rows = []
    for name, result in saved.items():
        for label, target in result.get("targets", {}).items():
            value, goal, met = target["value"], target["target"], target["met"]
            sign = "≤" if (value <= goal) == met else "≥"  # a met target the value is under is a ceiling
            rows.append(
                [LABELS.get(label, label.replace("_", " ")), f"{value:.3g}", f"{sign} {goal:g}", met, name]
            )
    if ingest := saved.get("ingest"):
        con, ext = ingest["consolidate"], ingest["extraction"]
        rows.append(
            [
                "consolidate turns/s",
                f"{con['turns_per_s']:,.0f}",
                f"≥ {con['target_turns_per_s']:,}",
                con["met"],
                "ingest",
            ]
        )
        rows.append(
            [
                "20th turn → retrievable, p95 s",
                f"{ext['p95_s']:.2f}",
                f"≤ {ext['target_s']}",
                ext["met"],
                "ingest",
            ]
        )
    if concurrency := saved.get("concurrency"):
        paced = next((v for k, v in concurrency["summary"].items() if "writers at" in k), None)
        if paced:
            goal = concurrency["target_p95_ms"]
            rows.append(
                [
                    "retrieve p95 ms over HTTP, 8 paced writers",
                    f"{paced['p95_ms']:.1f}",
                    f"≤ {goal:g}",
                    paced["p95_ms"] <= goal,
                    "concurrency",
                ]
            )
    if cold := saved.get("cold_start"):
        slowest = max(row["import_ms"] for row in cold["rows"])
        met = all(row["met"] for row in cold["rows"])
        rows.append(
            ["slowest handler import, ms", f"{slowest:.0f}", f"≤ {cold['target_ms']}", met, "cold_start"]
        )
    return [
        [what, value, goal, "met" if met else "**missed**", source] for what, value, goal, met, source in rows
    ]


def page(saved: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# Performance",
        "",
        f"Generated by `{COMMAND}` from `bench/results/*.json`: do not edit by hand; run the benchmark,",
        "then that command. Each section says what its benchmark measures, the command that measures",
        "it, and the machine, load and date it ran at. Speeds are medians of several runs; a baseline,",
        "where there is one, ran in the same run. The project's machine has 2 CPU cores, often shared:",
        "compare the columns of one table rather than figures of different dates. How the figures came",
        "to be, and what was tried and not kept: [research/](research/README.md).",
        "",
        "## Targets",
        "",
        *table(["target", "measured", "goal", "verdict", "from"], targets(saved)),
        "",
    ]
    listed = set()
    for part, entries in PARTS:
        lines += [f"## {part}", ""]
        for entry in entries:
            listed.add(entry.name)
            if entry.name in saved:
                lines += section(entry, saved[entry.name])
    others = [name for name in saved if name not in listed]
    if others:
        lines += ["## Other results", ""]
        for name in others:
            lines += section(_unlisted(name, saved[name]), saved[name])
    return "\n".join(lines).rstrip() + "\n"


def marks(name: str) -> tuple[str, str]:
    """The comments around a generated block named `name` in a hand-written page."""
    return (
        f"<!-- {name}: generated by `{COMMAND}` from bench/results/*.json; do not edit -->",
        f"<!-- end of {name} -->",
    )


def figures(saved: dict[str, dict[str, Any]]) -> list[str]:
    """The README's figures: the targets, and the headline of each retrieval benchmark."""
    lines = ["", *table(["target", "measured", "goal", "verdict", "from"], targets(saved)), ""]
    for name, label in (("locomo_retrieval", "LoCoMo dev"), ("korean_retrieval", "Korean set")):
        if result := saved.get(name):
            systems = list(result["systems"].items())[:4]
            rows = [
                [system, *(f"{s['all'][k]:.3f}" for k in ("recall_5", "recall_10", "ndcg_10"))]
                for system, s in systems
            ]
            lines += [
                f"{label} ({provenance(result)}):",
                "",
                *table(["retriever", "R@5", "R@10", "NDCG@10"], rows),
                "",
            ]
    if result := saved.get("index_ab"):
        lines += [
            f"The local index against the one it replaced ({provenance(result)}):",
            "",
            *before_after(result),
            "",
        ]
    return lines


def before_after(result: dict[str, Any]) -> list[str]:
    """`index_ab` at its biggest size: this checkout against the baseline, the figures side by side."""
    biggest = max(row["memories"] for row in result["rows"])
    row = {r["checkout"]: r for r in result["rows"] if r["memories"] == biggest}
    grown = {g["checkout"]: g["p95"] for g in result.get("growth", [])}
    figures = (
        ("retrieve p95, ms", "p95_ms", "{:.1f}"),
        ("CPU p95 per retrieve, ms", "cpu_p95_ms", "{:.1f}"),
        ("index load + first answer, s", "first_answer_s", "{:.2f}"),
        ("resident memory, MB", "rss_mb", "{:,.0f}"),
        ("a 3-memory write, ms", "upsert_ms", "{:.1f}"),
    )
    rows = [
        [label, fmt.format(row["baseline"][key]), fmt.format(row["this"][key])] for label, key, fmt in figures
    ]
    if grown:
        rows.append(
            ["p95 growth from the smallest size", *(f"×{grown[name]:.2f}" for name in ("baseline", "this"))]
        )
    return table([f"at {biggest:,} memories", f"before ({result['baseline']})", "after"], rows)


def cost_block(saved: dict[str, dict[str, Any]]) -> list[str]:
    return ["", *cost(saved["cost_estimate"]), ""] if "cost_estimate" in saved else [""]


def first_start_block(saved: dict[str, dict[str, Any]]) -> list[str]:
    """The README's quick start: what `make run` installs and how soon a first start answers."""
    if "first_start" not in saved:
        return [""]
    result = saved["first_start"]
    source = f"`python -m bench.speed.first_start`, {provenance(result)}; [more](docs/performance.md)"
    return ["", f"Measured ({source}):", "", *first_start(result), ""]


# Blocks generated inside hand-written pages: (page, block name, its lines from the saved results).
BLOCKS: tuple[tuple[Path, str, Callable[[dict[str, dict[str, Any]]], list[str]]], ...] = (
    (README, "figures", figures),
    (README, "first-start", first_start_block),
    (AWS, "cost", cost_block),
)


def with_block(text: str, name: str, lines: list[str]) -> str:
    begin, end = marks(name)
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise SystemExit(f"no generated block {name!r}: put {begin!r} and {end!r} where it goes")
    return text[: start + len(begin)] + "\n" + "\n".join(lines) + "\n" + text[stop:]


def generated(saved: dict[str, dict[str, Any]] | None = None) -> dict[Path, str]:
    """Each generated file's text as the saved results make it now."""
    saved = results() if saved is None else saved
    texts = {PAGE: page(saved)}
    for path, name, make in BLOCKS:
        text = texts.get(path) or path.read_text(encoding="utf-8")
        texts[path] = with_block(text, name, make(saved))
    return texts


def stale() -> list[Path]:
    return [path for path, text in generated().items() if path.read_text(encoding="utf-8") != text]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 while a generated file is stale")
    args = parser.parse_args(argv)
    if args.check:
        behind = stale()
        for path in behind:
            print(f"{path.relative_to(ROOT)} is stale: run `{COMMAND}`", file=sys.stderr)
        return 1 if behind else 0
    for path, text in generated().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
