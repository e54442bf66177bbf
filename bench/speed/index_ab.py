"""The local index against another checkout's, interleaved: retrieve latency, load time, memory.

    python -m bench.speed.index_ab --baseline ../old-checkout [--sizes 10000 100000] [--rounds 3]

For each size, `--rounds` rounds each start one fresh process per checkout (the order alternating
from round to round, so both meet the same load on a shared machine), which loads that checkout's
data folder of the size (`bench.speed.index_fixture`, as its index format names it: the same store,
each checkout's own index), runs the LoCoMo dev questions through `usecases.retrieve.run` with one
caller (`bench.speed.retrieve_latency.measure`, query embedding apart) and reports p50/p95, the index's
load time and the time to the first answer after it, the process's resident memory (VmRSS, and
VmHWM: the peak) and then what writes cost: `--jobs` upserts of 3 memories each (27 documents)
into a fresh index on disk (median and p95 per job, documents per second). The figures are the
medians over the rounds; `growth` is each checkout's p95 at its biggest size over its smallest;
`--keep` keeps the saved rows of sizes not measured now. Writes bench/results/index_ab.json, or
`--name`'s file (one per A/B recorded).
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
import json, random, sys, tempfile, time
from pathlib import Path
import numpy as np
from bench.common import locomo_questions, median, percentile
try:  # bench/ split into speed/quality/experiments; a baseline checkout may predate it
    from bench.speed.index_fixture import DIM, Latent, _memory, _windows, corpus
    from bench.speed.retrieve_latency import _synthetic, load, measure, timed
except ImportError:
    from bench.index_fixture import DIM, Latent, _memory, _windows, corpus
    from bench.retrieve_latency import _synthetic, load, measure, timed
from memory_engine.adapters.local.index_files import PersistedIndex
from memory_engine.indexing.documents import index_documents
size, queries, passes, jobs = (int(x) for x in sys.argv[1:5])
questions, _ = locomo_questions(queries, _synthetic)
started = time.perf_counter()
engine, load_s = load(size)
timed(engine, questions[0])
first_answer_s = time.perf_counter() - started
for question in questions[:10]:
    timed(engine, question)
walls, cpu = measure(engine, questions, 1, passes)
status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
# Writes: jobs of 3 memories (27 documents with their window vectors) into a fresh index on disk.
latent, turns, rng, text_rng, upserts = Latent(), corpus(), np.random.default_rng(7), random.Random(7), []
with tempfile.TemporaryDirectory() as tmp:
    (Path(tmp) / "index").mkdir()  # (the index before wrote into a folder that exists)
    index = PersistedIndex(Path(tmp) / "index")
    for job in range(jobs):
        base = rng.standard_normal((3, latent.rank)).astype(np.float32)
        parts = latent.embed(np.repeat(base, 8, axis=0), rng)
        windows = _windows(parts.reshape(3, 8, DIM)).reshape(-1, DIM)
        docs = []
        for at in range(3):
            own, mine = latent.embed(base[at : at + 1], rng)[0], slice(at * 8, at * 8 + 8)
            memory, sources = _memory(size + 3 * job + at, turns, text_rng, own, parts[mine])
            memory = memory.model_copy(update={"window_embeddings": windows[mine].tolist()})
            docs += index_documents(memory, sources)
        began = time.perf_counter()
        index.upsert(docs)
        upserts.append(time.perf_counter() - began)
    index.close()
print(json.dumps({
    "p50_ms": median(walls), "p95_ms": percentile(walls, 0.95), "cpu_p95_ms": percentile(cpu, 0.95),
    "load_s": load_s, "first_answer_s": first_answer_s, "rss_mb": int(status["VmRSS"].split()[0]) / 1024,
    "peak_rss_mb": int(status["VmHWM"].split()[0]) / 1024, "documents": len(engine.index),
    "upsert_ms": 1000 * median(upserts), "upsert_p95_ms": 1000 * percentile(upserts, 0.95),
    "ingest_docs_per_s": 27 * jobs / sum(upserts),
}))
"""


def probe(root: Path, size: int, queries: int, passes: int, jobs: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(size), str(queries), str(passes), str(jobs)],
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
    parser.add_argument("--jobs", type=int, default=40, help="write jobs (3 memories each) per process")
    parser.add_argument("--keep", action="store_true", help="keep the saved rows of other sizes")
    parser.add_argument("--name", default="index_ab", help="bench/results/<name>.json (one per A/B)")
    args = parser.parse_args()

    trees = {"this": ROOT, "baseline": args.baseline.resolve()}
    rows = []
    for size in args.sizes:
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
            for name in order:
                runs[name].append(probe(trees[name], size, args.queries, args.passes, args.jobs))
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
        rows = kept(args.name, "rows", rows, set(args.sizes))
    print_table(
        [
            "memories",
            "checkout",
            "p50 ms",
            "p95 ms",
            "CPU p95 ms",
            "load s",
            "first answer s",
            "RSS MB",
            "peak RSS MB",
            "upsert ms",
            "upsert p95 ms",
            "ingest docs/s",
        ],
        [[r["memories"], r["checkout"], *(r[key] for key in _FIGURES)] for r in rows],
    )
    save(
        args.name,
        {
            "baseline": trees["baseline"].name, "queries": args.queries, "write_jobs": args.jobs,
            "fixture": FIXTURE_NOTE, "rows": rows, "growth": growth(rows),
        },
    )  # fmt: skip


def growth(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per checkout, how p95 (wall and CPU) grew from its smallest size measured to its biggest."""
    grown = []
    for name in dict.fromkeys(row["checkout"] for row in rows):
        mine = sorted((row for row in rows if row["checkout"] == name), key=lambda row: row["memories"])
        if len(mine) > 1:
            small, big = mine[0], mine[-1]
            grown.append({
                "checkout": name, "from": small["memories"], "to": big["memories"],
                "p95": big["p95_ms"] / small["p95_ms"], "cpu_p95": big["cpu_p95_ms"] / small["cpu_p95_ms"],
            })  # fmt: skip
    return grown


FIXTURE_NOTE = (
    "bench.speed.index_fixture: one tenant, one memory thread; per memory one memory document and 8 turn "
    "documents with window vectors, written straight through the SearchIndex port in chunks of "
    "2,000 memories (no embedding, no extraction): text drawn from LoCoMo dev turns with seeded "
    "generators, unit vectors from a seeded 32-dimensional latent space mapped into 384; both "
    "checkouts index the same generated documents beside the same SQLite store"
)


_FIGURES = (
    "p50_ms", "p95_ms", "cpu_p95_ms", "load_s", "first_answer_s", "rss_mb", "peak_rss_mb", "upsert_ms",
    "upsert_p95_ms", "ingest_docs_per_s",
)  # fmt: skip

if __name__ == "__main__":
    main()
