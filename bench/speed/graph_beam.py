"""The HNSW search beam against recall: ANN recall@10 and graph query time per document kind.

    python -m bench.speed.graph_beam [--size 100000] [--queries 200] [--beams 250:5 150:3 ...]

Loads one cached data folder (`bench.speed.index_fixture`) as `retrieve_latency` does, takes the
truth from an exact scan of the graphs' own vectors (`retrieve_latency.Twin`), then for each beam
(`ef_search:ef_factor`, the beam being max(ef_search, ef_factor * k)) measures per kind, with
retrieve's candidate counts: recall@10 of the dense candidates against the truth (as
`retrieve_latency` computes it) and the median and p95 milliseconds of the shard's graph query
alone (`GraphVectors.top`). `GraphParams` is a query-time setting: the same graphs serve every
beam. Writes bench/results/graph_beam.json.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench.common import locomo_questions, median, percentile, print_table, save, stamped
from bench.speed.index_fixture import TENANT, THREAD
from bench.speed.retrieve_latency import (
    TARGET_RECALL_AT_10,
    Twin,
    _synthetic,
    dense_top10,
    load,
    recall_at_10,
)
from memory_engine.adapters.local.index_files import PersistedIndex


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--beams", nargs="+", default=["250:5", "200:4", "150:3", "100:2"])
    args = parser.parse_args()

    queries, queries_from = locomo_questions(args.queries, _synthetic)
    engine, _ = load(args.size)
    index = engine.index
    assert isinstance(index, PersistedIndex)
    twin = Twin(index)
    config = engine.retrieval
    kinds = {"memory": config.memory_candidates, "turn": config.turn_candidates}
    twin.use("exact")
    truth = {kind: dense_top10(engine, queries, kind, k) for kind, k in kinds.items()}  # type: ignore[arg-type]
    twin.use("ann")
    vectors = np.asarray(engine.embedder.embed(queries, mode="query"), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows: list[dict[str, Any]] = []
    for beam in args.beams:
        ef_search, ef_factor = beam.split(":")
        index.graph.ef_search, index.graph.ef_factor = int(ef_search), float(ef_factor)
        for kind, k in kinds.items():
            graph = index.shards[TENANT, kind, THREAD].vectors  # type: ignore[index]
            samples = []
            for vector in vectors:
                started = time.perf_counter()
                graph.top(vector, k)
                samples.append((time.perf_counter() - started) * 1000)
            found = dense_top10(engine, queries, kind, k)  # type: ignore[arg-type]
            rows.append(
                stamped({
                    "memories": args.size, "documents": len(graph), "kind": kind, "k": k,
                    "ef_search": index.graph.ef_search, "ef_factor": index.graph.ef_factor,
                    "beam": index.graph.beam(k), "recall_at_10": recall_at_10(found, truth[kind]),
                    "query_p50_ms": median(samples), "query_p95_ms": percentile(samples, 0.95),
                })
            )  # fmt: skip
            print(f"  {beam} {kind}: {rows[-1]}", flush=True)
    engine.store.close()  # type: ignore[attr-defined]
    print_table(
        ["kind", "k", "nodes", "ef_search", "ef_factor", "beam", "recall@10", "query p50 ms", "query p95 ms"],
        [
            [r[key] for key in ("kind", "k", "documents", "ef_search", "ef_factor", "beam")]
            + [r[key] for key in ("recall_at_10", "query_p50_ms", "query_p95_ms")]
            for r in rows
        ],
    )
    save(
        "graph_beam",
        {"queries": len(queries), "queries_from": queries_from, "target_recall_at_10": TARGET_RECALL_AT_10}
        | {"rows": rows},
    )


if __name__ == "__main__":
    main()
