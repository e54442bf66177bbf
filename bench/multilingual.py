"""Korean beside English, and the default embedder beside MiniLM: the LoCoMo harness on each.

    python -m bench.multilingual [--english ../shared/data/locomo-dev.json]
                                 [--korean bench/data/korean/korean-dialogues.json]
                                 [--embedders e5 minilm] [--sets english korean korean-en]

For every data set × embedder, one run of the LoCoMo evidence-retrieval harness
(bench/locomo_retrieval.py, default engine only) on the same code, in this one process: the
engine's Recall@5/10, NDCG@10, MRR (categories 1–4), and the harness's baselines. Beside them,
BM25 over turns with the engine's own analyzer (retrieval/text.py: Korean morphology where
lindera is installed), a stronger Korean baseline than the protocol's whitespace words.
`korean-en` is the English translation of the Korean set (same facts, same evidence).
Writes bench/results/multilingual.json. The machine is shared: timings are not the point.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT, print_table, save
from bench.locomo.data import Conversation, default_data, load
from bench.locomo.metrics import by_category, score
from memory_engine.ports import Embedder
from memory_engine.retrieval.bm25 import Bm25

KOREAN = ROOT / "bench" / "data" / "korean" / "korean-dialogues.json"
METRICS = ("recall_5", "recall_10", "ndcg_10", "mrr")


def embedder(name: str) -> Embedder:
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder("minilm" if name == "minilm" else "e5")


def analysed_bm25(conversations: Sequence[Conversation]) -> dict[str, Any]:
    """BM25 over turns ("speaker: text"), k1 1.5, b 0.75, the engine's analyzer on both sides."""
    from memory_engine.retrieval.korean import analyzer
    from memory_engine.retrieval.text import tokenize

    scores = []
    for conversation in conversations:
        index = Bm25(k1=1.5, b=0.75)
        order = {turn.dia_id: i for i, turn in enumerate(conversation.turns)}
        for turn in conversation.turns:
            index.add(turn.dia_id, tokenize(turn.line()))
        for question in conversation.questions:
            found = index.scores(tokenize(question.question))
            ranked = sorted(found, key=lambda dia_id: (-found[dia_id], order[dia_id]))
            scores.append(score(ranked, question.gold_turns, question.gold_sessions, question.category, 0))
    return {"analyzer": analyzer(), **_means(by_category(scores))}


def _means(summaries: dict[str, Any]) -> dict[str, Any]:
    return {
        "questions": summaries["all"].questions,
        **{name: round(summaries["all"].means.get(name, 0.0), 4) for name in METRICS},
        "recall_10_by_category": {
            key: round(summary.means.get("recall_10", 0.0), 4)
            for key, summary in summaries.items()
            if key != "all" and summary.questions
        },
    }


def harness(data: Path, model: Embedder, quiet: bool) -> dict[str, Any]:
    from bench import locomo_retrieval

    with tempfile.TemporaryDirectory(prefix="multilingual-") as scratch:
        argv = ["--data", str(data), "--no-ablations", "--no-plot", "--results", f"{scratch}/r.json"]
        found = locomo_retrieval.main([*argv, *(["--quiet"] if quiet else [])], embedder=model)
    systems = found["systems"]
    return {
        "engine": _means(systems[locomo_retrieval.DEFAULT_NAME]),
        "bm25_whitespace": _means(systems[locomo_retrieval.BM25_NAME]),
        "dense_over_turns": _means(systems[locomo_retrieval.DENSE_NAME]),
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--english", type=Path, default=default_data())
    parser.add_argument("--korean", type=Path, default=KOREAN)
    parser.add_argument("--embedders", nargs="+", default=["e5", "minilm"], choices=["e5", "minilm"])
    parser.add_argument("--sets", nargs="+", default=["english", "korean", "korean-en"])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    paths = {
        "english": args.english,
        "korean": args.korean,
        "korean-en": args.korean.with_name("english-dialogues.json"),
    }
    results: dict[str, Any] = {}
    rows = []
    for name in args.sets:
        conversations = load(paths[name])
        entry: dict[str, Any] = {
            "data": paths[name].name,
            "bm25_engine_analyzer": analysed_bm25(conversations),
        }
        for model_name in args.embedders:
            started = time.perf_counter()
            entry[model_name] = harness(paths[name], embedder(model_name), args.quiet)
            entry[model_name]["seconds"] = round(time.perf_counter() - started, 1)
            engine = entry[model_name]["engine"]
            rows.append([name, f"engine ({model_name})", *(engine[m] for m in METRICS)])
            dense = entry[model_name]["dense_over_turns"]
            rows.append([name, f"{model_name} over turns", *(dense[m] for m in METRICS)])
        bm25 = entry[args.embedders[0]]["bm25_whitespace"]
        rows.append([name, "BM25 whitespace words", *(bm25[m] for m in METRICS)])
        analysed = entry["bm25_engine_analyzer"]
        rows.append([name, f"BM25 engine analyzer ({analysed['analyzer']})", *(analysed[m] for m in METRICS)])
        results[name] = entry
    print_table(["set", "system", *METRICS], rows)
    save("multilingual", {"sets": results, "embedders": args.embedders}, args.out)
    return results


if __name__ == "__main__":
    main()
