"""The quality benchmarks' own tables for docs/performance.md (`python -m bench.report` writes the page)."""

from __future__ import annotations

from typing import Any

from bench.quality.extraction_quality import table as extraction_table
from bench.quality.llm_rows import report as llm_report
from bench.quality.locomo.report import COLUMNS
from bench.render import cell, provenance, table


def retrieval(result: dict[str, Any]) -> list[str]:
    """LoCoMo-format retrieval: every system and ablation of the run, categories 1–4."""
    lines = [
        f"{result['data']}: {len(result['conversations'])} conversations, {result['turns']:,} turns, "
        f"{result['questions']:,} questions; {result['headline']}. Tokens@10: {result['tokens']}.",
        "",
    ]
    header = ["retriever", *(label for _, label in COLUMNS), "tokens@10"]
    rows = []
    for name, categories in result["systems"].items():
        headline = categories["all"]
        rows.append([name, *(f"{headline.get(key, 0.0):.3f}" for key, _ in COLUMNS), headline.get("tokens")])
    return lines + table(header, rows)


def forming(result: dict[str, Any]) -> list[str]:
    """The forming benchmark: per state of extraction, the default engine (and the rows it is
    compared with), categories 1–4; then whether the target held."""
    target = result["target"]
    held = "held" if target["met"] else "not held"
    embedder = result.get("embedder", "e5")
    lines = [
        f"{result['data']}: {len(result['conversations'])} conversations, {result['turns']:,} turns, "
        f"{result['questions']:,} questions; {result['headline']}; embedder `{embedder}`.",
        "",
    ]
    header = ["engine", "state", "R@5", "R@10", "NDCG@10"]
    rows = []
    for name, states in result["systems"].items():
        for state in result["states"]:
            means = states[state]["all"]
            rows.append(
                [name, state, *(f"{means.get(k, 0.0):.3f}" for k in ("recall_5", "recall_10", "ndcg_10"))]
            )
    lines += table(header, rows)
    lines += [
        "",
        f"Target (no state's R@10 more than {result['tolerance']} below the lower of all buffered and all "
        f"extracted, i.e. under {target['floor_recall_10']:.3f}): **{held}**; the lowest state is "
        f"{target['worst_state']} at {target['worst_recall_10']:.3f}.",
    ]
    return lines


def extraction(result: dict[str, Any]) -> list[str]:
    columns = result["columns"]
    made = "; ".join(
        f"{label}: commit {column['commit']}, {column['memories']} memories, {provenance(column)}"
        for label, column in columns.items()
    )
    return [
        f"{result['set']}. Precision / recall per field ({made}).",
        "",
        "All conversations:",
        "",
        extraction_table(columns, "all"),
        "",
        "The held-out pair (written after the changes, not tuned on):",
        "",
        extraction_table(columns, "held-out"),
    ]


def llm_extraction(result: dict[str, Any]) -> list[str]:
    return llm_report(result)


def tuning(result: dict[str, Any]) -> list[str]:
    """The fusion weights chosen on the dev split, and how each held-out conversation fared."""
    cv = result["cross_validation"]
    folds = [[fold["held_out"], fold["objective"], cell(fold["chosen"])] for fold in cv["folds"]]
    return [
        f"Objective: {result['objective']} (noise {result['noise']}). Chosen on all six conversations: "
        f"{cell(result['chosen'])}.",
        "",
        *table(["held-out conversation", "objective", "weights chosen on the other five"], folds),
        "",
        "; ".join(f"{key.replace('_', ' ')}: {cell(value)}" for key, value in cv.items() if key != "folds")
        + ".",
    ]
