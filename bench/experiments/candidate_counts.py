"""How many candidates per retriever the index must hand to fusion: fewer turns, same ranking?

    python -m bench.experiments.candidate_counts [--data FILE ...] [--cases DIR] [--turns 200 100 50 40]
                                                  [--memories 50 30 20]

Each question's evidence is gathered once through `retrieve.gather` at the harness's depth (200
candidates per retriever and kind: `bench.quality.locomo.tune.collect`), then cut down to what the
index would hand over at a smaller count: per kind, the k best by cosine joined with the k best by
BM25 (what `SearchIndex.search_kinds` returns: each candidate keeps both scores, and the best BM25,
which normalises the rest, is always among the k best). The cut is exact where the index scans
exactly (every LoCoMo conversation is below the ANN threshold). Buffered turns are never cut.
Fusion then ranks what is left with the shipped weights, scored as the harness scores it.
Reported: Recall@5, Recall@10 and NDCG@10 over categories 1–4 and their mean (the objective the
weights were tuned on, where differences under 0.003 are noise: `bench.quality.locomo.tune`), per
data set (LoCoMo dev and the project's Korean
set by default). `--cases DIR` keeps each set's gathered evidence (pickle) to replay without
ingesting again. Writes bench/results/candidate_counts.json.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import save, stamped
from bench.quality.locomo.data import default_data
from bench.quality.locomo.metrics import HEADLINE, ndcg_at, recall_at
from bench.quality.locomo.tune import Case, _cases, ranking
from memory_engine.retrieval.config import RetrievalConfig
from memory_engine.retrieval.features import FoundTurn

KOREAN = Path(__file__).resolve().parents[1] / "data" / "korean" / "korean-dialogues.json"


def _best(items: Sequence[tuple[str, float]], k: int) -> set[str]:
    ordered = sorted(items, key=lambda item: (-item[1], item[0]))
    return {key for key, _ in ordered[:k]}


def kept_turns(indexed: Sequence[FoundTurn], k: int) -> set[str]:
    """The indexed turns the index hands over at k: the k best by cosine and the k best by BM25."""
    dense = _best([(turn.key, turn.dense) for turn in indexed], k)
    lexical = _best([(turn.key, turn.bm25) for turn in indexed if turn.bm25 > 0], k)
    return dense | lexical


def cut(case: Case, turns: int, memories: int) -> Case:
    """The case as gathered at `turns` turn and `memories` memory candidates per retriever."""
    gathered = case.gathered
    indexed = gathered.sources[0] if gathered.sources else []
    keep = kept_turns(indexed, turns)
    buffered = {turn.key for source in gathered.sources[1:] for turn in source}
    memory_keep = _best([(m.memory_id, m.features["memory_dense"]) for m in gathered.memories], memories)
    memory_keep |= _best(
        [(m.memory_id, m.features["memory"]) for m in gathered.memories if m.features["memory"] > 0], memories
    )
    smaller = replace(
        gathered,
        memories=[m for m in gathered.memories if m.memory_id in memory_keep],
        turns=[t for t in gathered.turns if t.key in keep or t.key in buffered],
    )
    return Case(case.question, smaller, case.dialogs)


def measure(cases: Sequence[Case], turns: int, memories: int) -> dict[str, Any]:
    weights = RetrievalConfig().weights
    r5, r10, ndcg, counted = 0.0, 0.0, 0.0, 0
    for case in cases:
        if case.question.category not in HEADLINE:
            continue
        ranked, gold = ranking(cut(case, turns, memories), weights), case.question.gold_turns
        r5 += recall_at(ranked, gold, 5)
        r10 += recall_at(ranked, gold, 10)
        ndcg += ndcg_at(ranked, gold, 10)
        counted += 1
    n = max(counted, 1)
    return {
        "turn_candidates": turns, "memory_candidates": memories, "questions": counted,
        "recall_at_5": r5 / n, "recall_at_10": r10 / n, "ndcg_at_10": ndcg / n,
        "objective": (r5 + r10 + ndcg) / (3 * n),
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", default=[default_data(), KOREAN])
    parser.add_argument("--cases", type=Path, default=None, help="folder of gathered evidence (reused)")
    parser.add_argument("--turns", type=int, nargs="+", default=[200, 100, 75, 60, 50, 40])
    parser.add_argument("--memories", type=int, nargs="+", default=[50, 30, 20])
    args = parser.parse_args(argv)
    sets = {}
    for data in args.data:
        cached = args.cases / f"{data.stem}.pkl" if args.cases else None
        # every conversation of the set (`tune` may take the first few only)
        cases = _cases(argparse.Namespace(data=data, cases=cached, conversations=None))
        rows = [measure(cases, t, m) for t, m in itertools.product(args.turns, args.memories)]
        for row in rows:
            print(
                f"{data.stem}: turns {row['turn_candidates']:>3}, memories {row['memory_candidates']:>3}: "
                f"R@5 {row['recall_at_5']:.4f} R@10 {row['recall_at_10']:.4f} "
                f"NDCG@10 {row['ndcg_at_10']:.4f} objective {row['objective']:.4f}",
                flush=True,
            )
        sets[data.stem] = stamped({"rows": rows})
    payload = {"sets": sets}
    save("candidate_counts", payload)
    return payload


if __name__ == "__main__":
    main()
