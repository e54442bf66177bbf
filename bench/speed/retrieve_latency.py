"""Retrieve latency at 1k / 10k / 100k memories and 1M index documents, ANN index against exact scan.

    python -m bench.speed.retrieve_latency [--sizes 1000 10000 100000 111112] [--queries 200]
                                     [--concurrency 1 100] [--runs 3] [--keep]

Each size is a cached data folder (`bench.speed.index_fixture`: LoCoMo text, structured synthetic
vectors, every memory in the searched thread beside 12 still-buffered turns, 9 index documents
per memory, so 111,112 memories are 1,000,008 documents). The engine loads it as the local server
does (SQLite store, persisted local index) and runs LoCoMo dev questions through
`usecases.retrieve.run`, the code behind the route. Then, in the same process and on the same
queries, every HNSW shard is swapped for an exact scan of the same vectors: the baseline, and the
reference for the ANN's recall@10 (per document kind, with the candidate counts retrieve asks
for). The query embedding is taken out (precomputed vectors; the real model's time for the same
queries is reported apart). "100 callers" is 100 threads calling at once on one engine. With
`--keep`, the saved rows of sizes not measured now stay in the results (each row says when and at
what load it was measured), so a size whose data folder takes long to build can run later alone.

Writes bench/results/retrieve_latency.json and bench/results/retrieve_latency.png.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import (
    RESULTS,
    kept,
    locomo_questions,
    median,
    percentile,
    print_table,
    save,
    saved,
    stamped,
)
from bench.speed.index_fixture import DATABASE, TENANT, THREAD, PrecomputedEmbedder, data_dir
from memory_engine.adapters.local.index_files import PersistedIndex
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.adapters.local.vectors import ExactVectors, GraphVectors, Vectors
from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.limits import Limits
from memory_engine.models.api import RetrieveRequest
from memory_engine.ports import DocKind
from memory_engine.settings import Settings
from memory_engine.usecases import retrieve
from memory_engine_app.local_index import freeze_loaded

TARGET_P95_MS_AT_100K = 20.0
TARGET_GROWTH_10K_TO_100K = 2.0
TARGET_RECALL_AT_10 = 0.98


class _NoQueue:
    def send(self, job: Any) -> None:
        raise AssertionError("retrieve never queues")


def _synthetic(i: int) -> str:
    """A query for a checkout without the LoCoMo questions (fixture text: w0, w1, ...)."""
    return f"what did w{i} say about w{i + 7}"


def load(size: int) -> tuple[Engine, float]:
    folder = data_dir(size)
    started = time.perf_counter()
    index = PersistedIndex.load(folder / f"{DATABASE}.index")
    load_s = time.perf_counter() - started
    freeze_loaded()  # as the server does after loading its index
    engine = Engine(
        limits=Limits.of(Settings()),
        store=SqliteStore(folder / DATABASE),
        queue=_NoQueue(),
        index=index,
        embedder=PrecomputedEmbedder(),
        extractor=BuiltinExtractor(),
    )
    return engine, load_s


class Twin:
    """Every graph shard of an index with an exact scan of the same vectors beside it, to swap in."""

    def __init__(self, index: LocalSearchIndex) -> None:

        self.pairs: list[tuple[Any, Vectors, Vectors]] = []
        with index.lock.writing():
            for shard in index.shards.values():
                graph = shard.vectors
                if isinstance(graph, GraphVectors):
                    ids = sorted(graph.live_ids)
                    exact = ExactVectors(graph.dim)
                    exact.put(ids, graph.rows(ids))  # the graph's own (float16-rounded) vectors
                    self.pairs.append((shard, graph, exact))

    def use(self, which: str) -> None:
        for shard, graph, exact in self.pairs:
            shard.vectors = graph if which == "ann" else exact


def request(query: str) -> RetrieveRequest:
    return RetrieveRequest.model_validate(
        {
            "parent_session_uuids": [THREAD],
            "last_dialog_uuid": "live-11",
            "recent_dialogs": ["live-10", "live-11"],
            "user_input": {"query": query},
            "options": {"limit": 5},
        }
    )


def timed(engine: Engine, query: str) -> tuple[float, float]:
    """Wall and process CPU milliseconds of one retrieve (CPU: meaningful with one caller only)."""
    started, cpu = time.perf_counter(), time.process_time()
    answer = retrieve.run(engine, TENANT, request(query))
    elapsed, used = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
    if not answer.data:
        raise AssertionError(f"no hit for {query!r}: the benchmark data is broken")
    return elapsed, used


def measure(engine: Engine, queries: list[str], callers: int, runs: int) -> tuple[list[float], list[float]]:
    """Per-call wall and CPU milliseconds over `runs` passes of the queries, by `callers` threads
    at once. On a shared machine a call's wall time includes waiting for a core; with one caller
    its CPU time does not, so it stays comparable across runs at different load."""
    samples: list[tuple[float, float]] = []
    for _ in range(runs):
        if callers == 1:
            samples.extend(timed(engine, query) for query in queries)
        else:
            with ThreadPoolExecutor(callers) as pool:
                samples.extend(pool.map(lambda query: timed(engine, query), queries))
    return [wall for wall, _ in samples], [cpu for _, cpu in samples]


def dense_top10(engine: Engine, queries: list[str], kind: DocKind, k: int) -> list[list[str]]:
    """The 10 best dense candidates per query, as the index hands them to retrieve (k per kind)."""
    vectors = engine.embedder.embed(queries, mode="query")
    out = []
    for vector in vectors:
        hits = engine.index.search(TENANT, [THREAD], "", vector, k, kind=kind)
        out.append([hit.doc_id for hit in hits[:10]])
    return out


def recall_at_10(found: list[list[str]], truth: list[list[str]]) -> float:
    return sum(len(set(f) & set(t)) / max(1, len(t)) for f, t in zip(found, truth, strict=True)) / len(truth)


def model_ms(queries: list[str]) -> dict[str, Any]:
    """The real query embedding (the engine's default embedder, as `wiring` builds it from the
    environment: multilingual-e5-small on ONNX Runtime unless configured), per call, same queries."""
    from memory_engine.composition.wiring import build_embedder

    embedder = build_embedder(Settings())
    embedder.embed(["warm up"], mode="query")
    samples = []
    for query in queries:
        started = time.perf_counter()
        embedder.embed([query], mode="query")
        samples.append((time.perf_counter() - started) * 1000)
    name = type(embedder).__name__
    return {"embedder": name, "p50_ms": median(samples), "p95_ms": percentile(samples, 0.95)}


def plot(rows: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    for index in ("ann", "exact"):
        mine = [row for row in rows if row["callers"] == 1 and row["index"] == index]
        docs = [row["documents"] for row in mine]
        for key, style in (("p50_ms", "o-"), ("p95_ms", "s--")):
            axis.plot(docs, [row[key] for row in mine], style, label=f"{key[:3]}, {index}")
    axis.axhline(TARGET_P95_MS_AT_100K, color="grey", linewidth=0.8, linestyle=":")
    axis.annotate("target p95 at 100k memories", (10_000, TARGET_P95_MS_AT_100K), fontsize=8, color="grey")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("index documents in the searched thread (9 per memory)")
    axis.set_ylabel("retrieve latency, ms (model excluded)")
    axis.set_title("retrieve, local backend, 1 caller (2 shared cores)")
    axis.grid(True, which="both", linewidth=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out)
    print(f"saved {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 111_112])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 100])
    parser.add_argument("--runs", type=int, default=3, help="passes over the queries per case")
    parser.add_argument("--no-model", action="store_true", help="skip timing the real query embedding")
    parser.add_argument("--keep", action="store_true", help="keep the saved rows of other sizes")
    args = parser.parse_args()

    queries, queries_from = locomo_questions(args.queries, _synthetic)
    rows: list[dict[str, Any]] = []
    recalls: list[dict[str, Any]] = []
    for size in args.sizes:
        engine, load_s = load(size)
        documents = len(engine.index)  # type: ignore[arg-type]
        twin = Twin(engine.index)  # type: ignore[arg-type]
        config = engine.retrieval
        truth: dict[str, list[list[str]]] = {}
        for index in ("exact", "ann"):
            twin.use(index)
            for query in queries[:10]:  # warm caches (buffered-turn vectors, pages of the store)
                timed(engine, query)
            for callers in args.concurrency:
                started = time.perf_counter()
                samples, cpu = measure(engine, queries, callers, args.runs)
                wall = time.perf_counter() - started
                alone = (
                    {"cpu_p50_ms": median(cpu), "cpu_p95_ms": percentile(cpu, 0.95)} if callers == 1 else {}
                )
                rows.append(
                    stamped({
                        "memories": size, "documents": documents, "index": index, "callers": callers,
                        "p50_ms": median(samples), "p95_ms": percentile(samples, 0.95),
                        "calls_per_s": len(samples) / wall, "load_s": load_s,
                        **alone,
                    })
                )  # fmt: skip
                print(
                    f"  {size:,} memories, {index}, {callers} caller(s): p95 {rows[-1]['p95_ms']:.1f} ms"
                    + (f", CPU p95 {rows[-1]['cpu_p95_ms']:.1f} ms" if callers == 1 else ""),
                    flush=True,
                )
            for kind, k in (("memory", config.memory_candidates), ("turn", config.turn_candidates)):
                top = dense_top10(engine, queries, kind, k)  # type: ignore[arg-type]
                if index == "exact":
                    truth[kind] = top
                else:
                    recalls.append(
                        {
                            "memories": size,
                            "kind": kind,
                            "k": k,
                            "recall_at_10": recall_at_10(top, truth[kind]),
                        }
                    )
        twin.use("ann")
        engine.store.close()  # type: ignore[attr-defined]
        del engine, twin
    model = {} if args.no_model else model_ms(queries)
    if args.keep:
        rows = kept("retrieve_latency", "rows", rows, set(args.sizes))
        recalls = kept("retrieve_latency", "recall", recalls, set(args.sizes))
        model = model or saved("retrieve_latency", "query_embedding") or {}
    print_table(
        ["memories", "documents", "index", "callers", "p50 ms", "p95 ms", "calls/s", "load s"],
        [
            [
                r["memories"],
                r["documents"],
                r["index"],
                r["callers"],
                r["p50_ms"],
                r["p95_ms"],
                r["calls_per_s"],
                r["load_s"],
            ]
            for r in rows
        ],
    )
    print_table(
        ["memories", "kind", "k", "ANN recall@10"],
        [[r["memories"], r["kind"], r["k"], r["recall_at_10"]] for r in recalls],
    )
    if model:
        name = model.get("embedder", "ONNX model")
        print(f"query embedding ({name}, apart): p50 {model['p50_ms']:.1f} ms, p95 {model['p95_ms']:.1f} ms")
    verdict = _verdict(rows, recalls)
    for line in verdict["lines"]:
        print(line)
    plot(rows, RESULTS / "retrieve_latency.png")
    save(
        "retrieve_latency",
        {
            "queries": len(queries),
            "queries_from": queries_from,
            "runs": args.runs,
            "rows": rows,
            "recall": recalls,
            "query_embedding": model,
            "targets": verdict["targets"],
        },
    )


def _verdict(rows: list[dict[str, Any]], recalls: list[dict[str, Any]]) -> dict[str, Any]:
    single = {row["memories"]: row for row in rows if row["callers"] == 1 and row["index"] == "ann"}
    targets: dict[str, Any] = {}
    lines = []
    if 100_000 in single:
        p95 = single[100_000]["p95_ms"]
        targets["p95_ms_at_100k"] = {
            "value": p95,
            "target": TARGET_P95_MS_AT_100K,
            "met": p95 <= TARGET_P95_MS_AT_100K,
        }
        lines.append(f"p95 at 100k memories (ANN): {p95:.1f} ms (target ≤ {TARGET_P95_MS_AT_100K:.0f} ms)")
    if 10_000 in single and 100_000 in single:
        growth = single[100_000]["p95_ms"] / single[10_000]["p95_ms"]
        targets["p95_growth_10k_to_100k"] = {
            "value": growth, "target": TARGET_GROWTH_10K_TO_100K, "met": growth <= TARGET_GROWTH_10K_TO_100K,
        }  # fmt: skip
        lines.append(
            f"p95 growth 10k → 100k (ANN): x{growth:.2f} (target ≤ x{TARGET_GROWTH_10K_TO_100K:.0f})"
        )
    if recalls:
        worst = min(r["recall_at_10"] for r in recalls)
        targets["ann_recall_at_10_worst"] = {
            "value": worst,
            "target": TARGET_RECALL_AT_10,
            "met": worst >= TARGET_RECALL_AT_10,
        }
        lines.append(f"ANN recall@10, worst size and kind: {worst:.3f} (target ≥ {TARGET_RECALL_AT_10})")
    return {"targets": targets, "lines": lines}


if __name__ == "__main__":
    main()
