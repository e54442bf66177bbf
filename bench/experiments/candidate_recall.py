"""Is a missed answer a ranking miss or a candidate miss? Per LoCoMo category, on the configured embedder.

    MEMORY_ENGINE_EMBEDDER=gemma MEMORY_ENGINE_EMBEDDING_MODEL_DIR=... \\
        python -m bench.experiments.candidate_recall [--data FILE] [--cases FILE] [--depths 50 100 200]

Each question's evidence is gathered once through `retrieve.gather` (`bench.quality.locomo.tune`'s
cases: the engine ingested as the harness does it, the configured embedder's vectors from the
harness's cache). For each depth k it reports the share of gold turns among the candidates the index
hands to fusion at k per retriever (`bench.experiments.candidate_counts.cut`: the k best turns by
cosine joined with the k best by BM25, and every buffered turn; a memory's own document is not
counted, since 50 of them stand for a whole conversation's turns), beside the shipped ranking's
Recall@10 and Recall@50 over all the candidates. Where Recall@10 trails candidate recall, the
ranking is what loses the answer; where candidate recall itself is low, no weight can bring it back.
Printed, not saved (docs/research/).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.experiments.candidate_counts import cut
from bench.quality.locomo.data import default_data
from bench.quality.locomo.metrics import HEADLINE, recall_at
from bench.quality.locomo.tune import Case, _cases, ranking
from memory_engine.retrieval.config import RetrievalConfig

NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def candidate_dialogs(case: Case) -> set[str]:
    """The dialogs of a case's turn candidates (indexed or buffered). A memory's own document is
    left out: it stands for its 8 turns, so 50 of them cover a whole LoCoMo conversation."""
    gathered = case.gathered
    found: set[str] = set()
    for turn in gathered.turns:
        if turn.key in gathered.buffered:
            found.add(gathered.buffered[turn.key].dialog_uuid)
            continue
        sources = case.dialogs.get(turn.memory_id or "", ())
        position = turn.key.rsplit(":", 1)[-1]
        if position.isdigit() and int(position) < len(sources):
            found.add(sources[int(position)])
    return found


def measure(cases: Sequence[Case], depths: Sequence[int]) -> dict[str, dict[str, float]]:
    """Per category (and "all": categories 1–4): mean Recall@10, Recall@50 and candidate recall
    at each depth."""
    weights = RetrievalConfig().weights
    sums: dict[str, dict[str, float]] = {}
    for case in cases:
        category = case.question.category
        if category not in HEADLINE:
            continue
        gold = case.question.gold_turns
        ranked = ranking(case, weights)
        values = {"recall_10": recall_at(ranked, gold, 10), "recall_50": recall_at(ranked, gold, 50)}
        for depth in depths:
            kept = candidate_dialogs(cut(case, depth, depth))
            values[f"candidates_{depth}"] = len(kept & set(gold)) / len(set(gold)) if gold else 0.0
        for key in ("all", NAMES[category]):
            bucket = sums.setdefault(key, {"questions": 0.0})
            bucket["questions"] += 1
            for name, value in values.items():
                bucket[name] = bucket.get(name, 0.0) + value
    return {
        key: {
            name: (value if name == "questions" else value / bucket["questions"])
            for name, value in bucket.items()
        }
        for key, bucket in sums.items()
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data())
    parser.add_argument(
        "--cases", type=Path, default=None, help="gathered evidence (pickle), kept and reused"
    )
    parser.add_argument("--conversations", type=int, default=0, help="only the first N")
    parser.add_argument("--depths", type=int, nargs="+", default=[50, 100, 200])
    args = parser.parse_args(argv)
    cases = _cases(argparse.Namespace(data=args.data, cases=args.cases, conversations=args.conversations))
    rows = measure(cases, args.depths)
    columns = ["questions", "recall_10", "recall_50", *(f"candidates_{d}" for d in args.depths)]
    print("| category | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for key, row in rows.items():
        cells = [f"{row[c]:.0f}" if c == "questions" else f"{row.get(c, 0.0):.3f}" for c in columns]
        print(f"| {key} | " + " | ".join(cells) + " |")
    return rows


if __name__ == "__main__":
    main()
