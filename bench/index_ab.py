"""The local index against another checkout's, interleaved: retrieve latency, load time, memory.

    python -m bench.index_ab --baseline ../old-checkout [--sizes 10000 100000] [--rounds 3]

For each size, `--rounds` rounds each start one fresh process per checkout (the order alternating
from round to round, so both meet the same load on a shared machine), which loads that checkout's
data folder of the size (`bench.index_fixture`, as its index format names it: the same store,
each checkout's own index), runs the LoCoMo dev questions through `usecases.retrieve.run` with one
caller (`bench.retrieve_latency.measure`, query embedding apart) and reports p50/p95, the index's
load time and the process's resident memory (VmRSS, and VmHWM: the peak). The figures are the
medians over the rounds; `--keep` keeps the saved rows of sizes not measured now. Writes
bench/results/index_ab.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import ROOT, kept, median, print_table, save, stamped

# Run inside each checkout's own code: its retrieve_latency's load/measure, same questions.
_PROBE = """
import json, sys, time
from pathlib import Path
from bench.common import locomo_questions, median, percentile
from bench.retrieve_latency import _synthetic, load, measure, timed
size, queries, passes = (int(x) for x in sys.argv[1:4])
questions, _ = locomo_questions(queries, _synthetic)
engine, load_s = load(size)
for question in questions[:10]:
    timed(engine, question)
walls, cpu = measure(engine, questions, 1, passes)
status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
print(json.dumps({
    "p50_ms": median(walls), "p95_ms": percentile(walls, 0.95), "cpu_p95_ms": percentile(cpu, 0.95),
    "load_s": load_s, "rss_mb": int(status["VmRSS"].split()[0]) / 1024,
    "peak_rss_mb": int(status["VmHWM"].split()[0]) / 1024, "documents": len(engine.index),
}))
"""


def probe(root: Path, size: int, queries: int, passes: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(size), str(queries), str(passes)],
        env={**os.environ, "PYTHONPATH": f"{root / 'layers' / 'core'}:{root}"},
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"{root}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the other checkout")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--passes", type=int, default=2, help="passes over the questions per process")
    parser.add_argument("--keep", action="store_true", help="keep the saved rows of other sizes")
    args = parser.parse_args()

    trees = {"this": ROOT, "baseline": args.baseline.resolve()}
    rows = []
    for size in args.sizes:
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
            for name in order:
                runs[name].append(probe(trees[name], size, args.queries, args.passes))
                print(f"  {size:,} memories, round {round_ + 1}, {name}: {runs[name][-1]}", flush=True)
        for name, found in runs.items():
            rows.append(
                stamped({
                    "memories": size, "checkout": name, "documents": found[0]["documents"],
                    **{key: median([run[key] for run in found]) for key in _FIGURES},
                    "rounds": found,
                })
            )  # fmt: skip
    if args.keep:
        rows = kept("index_ab", "rows", rows, set(args.sizes))
    print_table(
        ["memories", "checkout", "p50 ms", "p95 ms", "CPU p95 ms", "load s", "RSS MB", "peak RSS MB"],
        [[r["memories"], r["checkout"], *(r[key] for key in _FIGURES)] for r in rows],
    )
    save("index_ab", {"baseline": trees["baseline"].name, "queries": args.queries, "rows": rows})


_FIGURES = ("p50_ms", "p95_ms", "cpu_p95_ms", "load_s", "rss_mb", "peak_rss_mb")

if __name__ == "__main__":
    main()
