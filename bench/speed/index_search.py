"""Latency of LocalSearchIndex.search over random documents: p50/p95 per index size.

    .venv/bin/python bench/index_search.py [--sizes 1000 10000 100000] [--dim 384]

Documents draw their words from a Zipf-distributed vocabulary without its most common ranks
(the analyzer drops stop words), and their vectors at random. The defaults are calibrated so a
query touches about one posting per indexed document, about 1.5 times what LoCoMo questions touch
over memory-sized documents of 8 turns (0.63): the lexical half's cost follows that number, which
the table prints as "postings/N". Documents are spread over `--threads` threads and the search
names one, so 1 thread is the worst case. Writes bench/results/index_search.json (see --out).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.ports import IndexDocument
from memory_engine.retrieval.text import tokenize

VOCABULARY = 30_000
RESULTS = Path(__file__).resolve().parents[1] / "results" / "index_search.json"


def _words(rng: np.random.Generator, count: int, zipf: float, stop: int) -> list[str]:
    ranks: list[int] = []
    while len(ranks) < count:
        drawn = np.minimum(rng.zipf(zipf, size=2 * count), VOCABULARY)
        ranks.extend(int(rank) for rank in drawn[drawn > stop])
    return [f"w{rank}" for rank in ranks[:count]]


def _build(args: argparse.Namespace, size: int, rng: np.random.Generator) -> LocalSearchIndex:
    dim, threads = args.dim, args.threads
    index = LocalSearchIndex()
    vectors = rng.standard_normal((size, dim)).astype(np.float32)
    created = datetime(2026, 1, 1, tzinfo=UTC)
    batch: list[IndexDocument] = []
    for i in range(size):
        batch.append(
            IndexDocument(
                tenant="bench",
                doc_id=f"doc-{i}",
                session_uuid=f"session-{i % threads}",
                thread=f"thread-{i % threads}",
                text=" ".join(_words(rng, args.words, args.zipf, args.stop)),
                vector=vectors[i].tolist(),
                source_dialog_uuids=[f"dialog-{i}"],
                created_at=created,
            )
        )
        if len(batch) == 1000:
            index.upsert(batch)
            batch = []
    index.upsert(batch)
    return index


def _percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--words", type=int, default=60, help="words per document")
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--query-words", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1, help="threads the documents are spread over")
    parser.add_argument("--zipf", type=float, default=1.4, help="Zipf exponent of word ranks")
    parser.add_argument("--stop", type=int, default=100, help="most common ranks left out, as stop words")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to save the JSON results")
    args = parser.parse_args()

    rng = np.random.default_rng(7)
    rows = []
    header = ("docs", "in thread", "build s", "postings/N", "p50 ms", "p95 ms", "dense p50", "lex p50")
    print(" ".join(f"{title:>10}" for title in header))
    for size in args.sizes:
        started = time.perf_counter()
        index = _build(args, size, rng)
        build_s = time.perf_counter() - started
        shard = index.shards["bench", "memory", "thread-0"]
        searcher = index.lexical._searcher("memory")  # read only, to report the workload
        queries = [
            (
                " ".join(_words(rng, args.query_words, args.zipf, args.stop)),
                rng.standard_normal(args.dim).astype(np.float32).tolist(),
            )
            for _ in range(args.queries)
        ]
        touched = statistics.mean(
            sum(searcher.doc_freq("body", term) for term in tokenize(text)) for text, _ in queries
        )
        total: list[float] = []
        dense: list[float] = []
        lexical: list[float] = []
        for text, vector in queries:
            for sink, (words, vec) in ((total, (text, vector)), (dense, ("", vector)), (lexical, (text, []))):
                started = time.perf_counter()
                index.search("bench", ["thread-0"], words, vec, args.k)
                sink.append((time.perf_counter() - started) * 1000)
        row = {
            "docs": size,
            "docs_in_thread": len(shard),
            "build_s": round(build_s, 2),
            "postings_per_doc": round(touched / size, 2),
            "p50_ms": round(statistics.median(total), 2),
            "p95_ms": round(_percentile(total, 0.95), 2),
            "dense_p50_ms": round(statistics.median(dense), 2),
            "lexical_p50_ms": round(statistics.median(lexical), 2),
        }
        rows.append(row)
        print(" ".join(f"{value:>10}" for value in row.values()))

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "benchmark": "index_search",
                "dim": args.dim,
                "words_per_doc": args.words,
                "query_words": args.query_words,
                "threads": args.threads,
                "zipf": args.zipf,
                "stop_ranks": args.stop,
                "k": args.k,
                "queries": args.queries,
                "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "numpy": np.__version__,
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
