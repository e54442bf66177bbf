"""docs/performance.md, the README's figures, aws.md's costs and the decided comparisons
(docs/research/comparisons.md), generated from bench/results/*.json.

    python -m bench.report            # rewrite them from the saved results
    python -m bench.report --check    # exit 1 while a generated file is stale, or a result is not
                                      # measured on the current code (naming each, and why)

Reads only the saved results, so the docs quote exactly what the benchmarks saved. A result file
with no entry below still gets a section (`bench.render.generic`), so a new benchmark's figures
show up as soon as it saves them; an entry says what the benchmark measures and gives its own table.
Each result's provenance (`bench.provenance`) dates it: a figure whose measured code has changed
since, or that has no record of its code, is marked where it is quoted, and `--check` names it.
The decided comparisons are history (each against a past checkout): dated, never marked.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import provenance as origin
from bench.common import RESULTS, ROOT
from bench.entries import PARTS, RESEARCH, Entry
from bench.experiments.tables import cost
from bench.render import commit_of, day, generic, provenance, short_path, table
from bench.speed.tables import aws_calls, first_start

PAGE = ROOT / "docs" / "performance.md"
RESEARCH_PAGE = ROOT / "docs" / "research" / "comparisons.md"
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


def section(entry: Entry, result: dict[str, Any], history: bool = False) -> list[str]:
    """A result's section: what it measures, its command and provenance, then its figures; marked
    when the code it measured has changed since (never in `history`, the decided comparisons)."""
    try:
        body = entry.render(result)
    except (KeyError, TypeError, IndexError) as error:  # a benchmark saved another shape: show it as saved
        print(f"{entry.name}: its own table failed ({error!r}); shown as saved", file=sys.stderr)
        body = generic(result)
    head = [f"### {entry.title}", "", entry.about, "", f"`{entry.command}` · {provenance(result)}", ""]
    if not history and (why := outdated(result)):
        head += [f"> **Not a figure of the current code**: {why}. Re-run `{entry.command}`.", ""]
    plot = RESULTS / f"{entry.name}.png"  # a benchmark that draws its figures saves them beside the JSON
    up = "../../" if history else "../"
    drawn = [f"![{entry.title}]({up}bench/results/{plot.name})", ""] if plot.is_file() else []
    return [*head, *body, "", *drawn]


def outdated(result: dict[str, Any]) -> str:
    """Why `result` is not a figure of the current code, in words; "" while it is."""
    drift = origin.drift(result)
    if drift.current:
        return ""
    if not drift.recorded:
        return "the code it measured is not recorded (saved before results recorded it)"
    reasons = []
    if drift.code:
        reasons.append(f"changed since: {', '.join(f'`{short_path(path)}`' for path in drift.code)}")
    if drift.settings:
        reasons.append(f"defaults changed since: {', '.join(drift.settings)}")
    return "; ".join(reasons)


def outdated_results(saved: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Every current-figure result not measured on the current code, with why (the decided
    comparisons are history and not checked)."""
    history = {entry.name for entry in RESEARCH}
    found = {name: outdated(result) for name, result in saved.items() if name not in history}
    return {name: why for name, why in found.items() if why}


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
        [what, value, goal, "met" if met else "**missed**", source, *_dated(saved[source])]
        for what, value, goal, met, source in rows
    ]


TARGET_HEADER = ["target", "measured", "goal", "verdict", "from", "measured on", "its code now"]


def _dated(result: dict[str, Any]) -> list[str]:
    """A target's date and commit, and whether the code it measured is still the checkout's."""
    when = " at ".join(part for part in (day(result), commit_of(result)) if part) or "—"
    drift = origin.drift(result)
    if drift.current:
        return [when, "unchanged"]
    return [when, "**changed**" if drift.recorded else "**not recorded**"]


def page(saved: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# Performance",
        "",
        f"Generated by `{COMMAND}` from `bench/results/*.json`: do not edit by hand; run the benchmark,",
        "then that command. Each section says what its benchmark measures, the command that measures",
        "it, and the machine, load and date it ran at. Speeds are medians of several runs; a baseline,",
        "where there is one, ran in the same run. The project's machine has 2 CPU cores, often shared:",
        "compare the columns of one table rather than figures of different dates. A figure whose measured",
        "code has changed since it was measured says so. How the figures came to be, what was tried and",
        "not kept, and the A/B runs that decided a change: [research/](research/README.md).",
        "",
        "## Targets",
        "",
        "Each from the result named, measured on the date and commit given; *its code now* says whether",
        "the code that result measured is still this checkout's (`python -m bench.report --check` lists",
        "every result that is not, and why).",
        "",
        *table(TARGET_HEADER, targets(saved)),
        "",
    ]
    listed = {entry.name for entry in RESEARCH}  # docs/research/comparisons.md
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
    lines = ["", *table(TARGET_HEADER, targets(saved)), ""]
    benchmarks = (
        ("locomo_retrieval", "LoCoMo dev"),
        ("locomo_retrieval_gemma", "LoCoMo dev, EmbeddingGemma as the engine's embedder"),
        ("korean_retrieval", "Korean set"),
    )
    for name, label in benchmarks:
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
    return lines


def research_page(saved: dict[str, dict[str, Any]]) -> str:
    """docs/research/comparisons.md: the decided A/B runs, each as its benchmark saved it."""
    lines = [
        "# Decided comparisons",
        "",
        f"Generated by `{COMMAND}` from `bench/results/*.json`: do not edit by hand. The A/B runs that",
        "decided a change, each interleaving the code of its day with a baseline checkout of its day on",
        "the same fixtures. They are history: dated and kept as measured, never re-run against today's",
        "code. What each decided and why: [speed.md](speed.md); current figures:",
        "[../performance.md](../performance.md).",
        "",
    ]
    for entry in RESEARCH:
        if entry.name in saved:
            lines += section(entry, saved[entry.name], history=True)
    return "\n".join(lines).rstrip() + "\n"


def cost_block(saved: dict[str, dict[str, Any]]) -> list[str]:
    return ["", *cost(saved["cost_estimate"]), ""] if "cost_estimate" in saved else [""]


def operation_cost_block(saved: dict[str, dict[str, Any]]) -> list[str]:
    """docs/aws.md's cost of each operation, from `bench.speed.aws_calls`."""
    if "aws_calls" not in saved:
        return [""]
    result = saved["aws_calls"]
    return [
        "",
        f"  `python -m bench.speed.aws_calls`, {provenance(result)}:",
        "",
        *indented(aws_calls(result)),
        "",
    ]


def indented(lines: list[str]) -> list[str]:
    """Lines inside a list item of the page."""
    return [f"  {line}" if line else "" for line in lines]


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
    (AWS, "operation-cost", operation_cost_block),
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
    texts = {PAGE: page(saved), RESEARCH_PAGE: research_page(saved)}
    for path, name, make in BLOCKS:
        text = texts.get(path) or path.read_text(encoding="utf-8")
        texts[path] = with_block(text, name, make(saved))
    return texts


def stale() -> list[Path]:
    return [path for path, text in generated().items() if path.read_text(encoding="utf-8") != text]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 while a generated file is stale or a result is not measured on the current code",
    )
    args = parser.parse_args(argv)
    behind = outdated_results(results())
    for name, why in behind.items():
        print(f"bench/results/{name}.json: not a figure of the current code: {why}", file=sys.stderr)
    if args.check:
        docs = stale()
        for path in docs:
            print(f"{path.relative_to(ROOT)} is stale: run `{COMMAND}`", file=sys.stderr)
        return 1 if docs or behind else 0
    for path, text in generated().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
