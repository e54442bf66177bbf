"""The run's table (printed and in docs/retrieval.md), its JSON record and the per-question JSONL."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import save
from bench.quality.locomo.metrics import Summary

COLUMNS = (
    ("recall_5", "R@5"),
    ("recall_10", "R@10"),
    ("ndcg_10", "NDCG@10"),
    ("mrr", "MRR"),
    ("session_recall_5", "sess R@5"),
    ("recall_500t", "R@500 tok"),
    ("recall_1000t", "R@1000 tok"),
)


def table(systems: dict[str, dict[str, Summary]]) -> str:
    """Markdown: headline metrics (categories 1–4), tokens per query, then R@10 per category."""
    categories = sorted({c for summaries in systems.values() for c in summaries if c != "all"}, key=int)
    header = ["retriever", *(label for _, label in COLUMNS), "tokens@10"]
    header += [f"R@10 cat {c}" for c in categories]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, summaries in systems.items():
        headline = summaries["all"].means
        cells = [name, *(f"{headline.get(key, 0.0):.3f}" for key, _ in COLUMNS)]
        cells.append(f"{headline.get('tokens', 0.0):,.0f}")
        cells += [_recall_10(summaries.get(c)) for c in categories]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _recall_10(summary: Summary | None) -> str:
    return f"{summary.means.get('recall_10', 0.0):.3f}" if summary else ""


def record(
    systems: dict[str, dict[str, Summary]], meta: dict[str, Any], variants: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    return {
        **meta,
        "variants": variants,
        "systems": {
            name: {
                category: {"questions": s.questions, **{k: round(v, 4) for k, v in s.means.items()}}
                for category, s in summaries.items()
            }
            for name, summaries in systems.items()
        },
        "recall_curves": {
            name: {category: [round(v, 4) for v in s.curve] for category, s in summaries.items()}
            for name, summaries in systems.items()
        },
    }


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """The result as `bench.common.save` writes every one (machine and provenance added), named by
    its file: `locomo_retrieval`, `korean_retrieval`, `locomo_tuning`..."""
    save(path.stem, payload, path)


def write_run(path: Path, rows: Sequence[tuple[str, int, list[str]]]) -> None:
    """One line per question: {"sample_id", "qa_index", "ranked"} (the ranked dia_ids)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for sample_id, qa_index, ranked in rows:
            out.write(json.dumps({"sample_id": sample_id, "qa_index": qa_index, "ranked": ranked}) + "\n")
