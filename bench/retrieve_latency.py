"""Retrieve latency: p50/p95 of the retrieve use case at 1k, 10k and 100k memories, 1 and 100 callers.

    python -m bench.retrieve_latency [--sizes 1000 10000 100000] [--queries 200] [--concurrency 1 100]

Memories are synthesized straight into the local store (SQLite file) and the local index, not
through extraction: text made of LoCoMo dev turns drawn at random (8 per memory, as a batch is),
random unit vectors; each memory is indexed as extraction indexes it, its own document plus one
per source turn (9 documents; `--no-turn-documents` for memory documents only). All of them sit
in one memory thread, the worst case (a thread's every memory is a candidate), beside 12
still-buffered turns. Queries are LoCoMo dev questions and go through
`usecases.retrieve.run`, the code behind the route, so the figures stay valid whatever the
retrieval internals become. The query embedding is taken out: the engine gets an embedder that
returns precomputed vectors, and the real model's time for the same queries is reported apart.
"100 callers" is 100 threads calling at once on one engine (the local server is threaded).

Writes bench/results/retrieve_latency.json and bench/results/retrieve_latency.png.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import RESULTS, locomo_path, locomo_turns, median, percentile, print_table, save
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_rows import insert_memories, insert_session, insert_turns
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import RetrieveRequest
from memory_engine.models.domain import Memory, MemoryFields, Session, Turn
from memory_engine.ports import EmbedMode
from memory_engine.settings import Settings
from memory_engine.usecases import retrieve
from memory_engine.usecases.indexing import index_document, index_documents

TENANT = "bench"
THREAD = "thread-0"
DIM = 384
BUFFERED_TURNS = 12
TARGET_P95_MS_AT_10K = 20.0
TARGET_GROWTH_10K_TO_100K = 2.0


class PrecomputedEmbedder:
    """Vectors without a model: fixed per text (seeded by the text), so retrieval does no model work."""

    dimension = DIM

    def __init__(self) -> None:
        self._cache: dict[str, list[float]] = {}

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        vector = self._cache.get(text)
        if vector is None:
            import numpy as np

            raw = np.random.default_rng(abs(hash(text))).standard_normal(DIM)
            vector = self._cache[text] = (raw / np.linalg.norm(raw)).tolist()
        return vector


class _NoQueue:
    def send(self, job: Any) -> None:
        raise AssertionError("retrieve never queues")


def corpus() -> list[str]:
    turns = [text for _, _, text in locomo_turns()]
    if turns:
        return turns
    rng = random.Random(3)
    words = [f"w{i}" for i in range(5000)]
    return [" ".join(rng.choice(words) for _ in range(20)) for _ in range(3000)]


def questions(count: int) -> list[str]:
    import json

    path = locomo_path()
    gold = path.with_name("locomo-dev-gold.jsonl") if path else None
    if gold is None or not gold.is_file():
        return [f"what did w{i} say about w{i + 7}" for i in range(count)]
    lines = [json.loads(line) for line in gold.read_text().splitlines() if line.strip()]
    return [line["question"] for line in lines[:count]]


def build(size: int, path: Path, turns: list[str], rng: random.Random, turn_documents: bool = True) -> Engine:
    import numpy as np

    store = SqliteStore(path)
    index = LocalSearchIndex()
    created = datetime(2026, 1, 1, tzinfo=UTC)
    session = Session(
        tenant=TENANT, session_uuid="s-live", parent_session_uuid=THREAD, user_name="Alex",
        language="en", created_at=created, next_seq=BUFFERED_TURNS,
    )  # fmt: skip
    vectors = np.random.default_rng(size).standard_normal((size, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunk = 2000
    for start in range(0, size, chunk):
        made = [
            _memory(i, created + timedelta(minutes=i), turns, rng, vectors[i].tolist())
            for i in range(start, min(size, start + chunk))
        ]
        with store._db.write() as conn:  # bulk path: a benchmark fixture, not an API
            insert_memories(conn, [memory for memory, _ in made])
        # As extraction indexes them: the memory's document, and one per source turn (the turns
        # themselves are not stored: retrieve reads only memories for index hits).
        index.upsert(
            [
                doc
                for memory, sources in made
                for doc in (index_documents(memory, sources) if turn_documents else [index_document(memory)])
            ]
        )
    live = [
        Turn(
            tenant=TENANT,
            session_uuid="s-live",
            dialog_uuid=f"live-{i}",
            seq=i,
            query=rng.choice(turns),
            answer="",
            user_name="Alex",
            timestamp=created,
            created_at=created,
        )
        for i in range(BUFFERED_TURNS)
    ]
    with store._db.write() as conn:
        insert_session(conn, session)
        insert_turns(conn, live)
    return Engine(
        settings=Settings(),
        store=store,
        queue=_NoQueue(),
        index=index,
        embedder=PrecomputedEmbedder(),
        extractor=BuiltinExtractor(),
    )


def _memory(
    i: int, created: datetime, turns: list[str], rng: random.Random, vector: list[float]
) -> tuple[Memory, list[Turn]]:
    lines = [rng.choice(turns) for _ in range(8)]
    words = sorted(
        {word.strip(".,!?").lower() for line in lines for word in line.split()[1:] if len(word) > 5}
    )
    fields = MemoryFields(
        summary=" ".join(lines[:3]),
        keywords=words[:20],
        key_facts=lines[3:6],
        key_dialogue=lines[6:8],
        characters=sorted({line.split(":", 1)[0] for line in lines}),
    )
    sources = [
        Turn(
            tenant=TENANT,
            session_uuid=f"s-{i // 100}",
            dialog_uuid=f"d-{i}-{j}",
            seq=(i % 100) * 8 + j,
            query=line.partition(": ")[2] or line,
            user_name=line.partition(": ")[0],
            timestamp=created,
            created_at=created,
        )
        for j, line in enumerate(lines)
    ]
    memory = Memory(
        tenant=TENANT,
        memory_id=f"{created:%Y%m%d_%H%M%S}_{i:06x}",
        session_uuid=f"s-{i // 100}",
        parent_session_uuid=THREAD,
        fields=fields,
        source_dialog_uuids=[f"d-{i}-{j}" for j in range(8)],
        first_seq=(i % 100) * 8,
        last_seq=(i % 100) * 8 + 7,
        embedding=vector,
        source_text="\n".join(lines),
        created_at=created,
    )
    return memory, sources


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


def timed(engine: Engine, query: str) -> float:
    started = time.perf_counter()
    answer = retrieve.run(engine, TENANT, request(query))
    elapsed = (time.perf_counter() - started) * 1000
    if not answer.data:
        raise AssertionError(f"no hit for {query!r}: the benchmark data is broken")
    return elapsed


def measure(engine: Engine, queries: list[str], callers: int, runs: int) -> list[float]:
    """Per-call milliseconds over `runs` passes of the queries, by `callers` threads at once."""
    samples: list[float] = []
    for _ in range(runs):
        if callers == 1:
            samples.extend(timed(engine, query) for query in queries)
        else:
            with ThreadPoolExecutor(callers) as pool:
                samples.extend(pool.map(lambda query: timed(engine, query), queries))
    return samples


def model_ms(queries: list[str]) -> dict[str, float]:
    """The real query embedding (the engine's default ONNX model), per call, for the same queries."""
    from memory_engine.adapters.local.onnx_embedder import OnnxMiniLmEmbedder

    embedder = OnnxMiniLmEmbedder()
    embedder.embed(["warm up"])
    samples = []
    for query in queries:
        started = time.perf_counter()
        embedder.embed([query], mode="query")
        samples.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": median(samples), "p95_ms": percentile(samples, 0.95)}


def plot(rows: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    for callers in sorted({row["callers"] for row in rows}):
        mine = [row for row in rows if row["callers"] == callers]
        sizes = [row["memories"] for row in mine]
        for key, style in (("p50_ms", "o-"), ("p95_ms", "s--")):
            axis.plot(sizes, [row[key] for row in mine], style, label=f"{key[:3]}, {callers} caller(s)")
    axis.axhline(TARGET_P95_MS_AT_10K, color="grey", linewidth=0.8, linestyle=":")
    axis.annotate("target p95 at 10k", (10_000, TARGET_P95_MS_AT_10K), fontsize=8, color="grey")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("memories in the searched thread")
    axis.set_ylabel("retrieve latency, ms (model excluded)")
    axis.set_title("retrieve use case, local backend (2 shared cores)")
    axis.grid(True, which="both", linewidth=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out)
    print(f"saved {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 100])
    parser.add_argument("--runs", type=int, default=3, help="passes over the queries per case")
    parser.add_argument(
        "--no-turn-documents",
        action="store_true",
        help="index memory documents only (as before the retrieval rework's per-turn documents)",
    )
    args = parser.parse_args()

    turns = corpus()
    queries = questions(args.queries)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for size in args.sizes:
            started = time.perf_counter()
            engine = build(
                size,
                Path(scratch) / f"{size}.sqlite3",
                turns,
                random.Random(size),
                not args.no_turn_documents,
            )
            build_s = time.perf_counter() - started
            for query in queries[:10]:  # warm caches (buffered-turn vectors, BM25 term arrays)
                timed(engine, query)
            for callers in args.concurrency:
                started = time.perf_counter()
                samples = measure(engine, queries, callers, args.runs)
                wall = time.perf_counter() - started
                rows.append(
                    {
                        "memories": size,
                        "callers": callers,
                        "p50_ms": median(samples),
                        "p95_ms": percentile(samples, 0.95),
                        "calls_per_s": len(samples) / wall,
                        "build_s": build_s,
                    }
                )
                print(
                    f"  {size:,} memories, {callers} caller(s): p95 {rows[-1]['p95_ms']:.1f} ms", flush=True
                )
            engine.store.close()  # type: ignore[attr-defined]
    model = model_ms(queries)
    print_table(
        ["memories", "callers", "p50 ms", "p95 ms", "calls/s", "build s"],
        [
            [r["memories"], r["callers"], r["p50_ms"], r["p95_ms"], r["calls_per_s"], r["build_s"]]
            for r in rows
        ],
    )
    print(f"query embedding (ONNX model, apart): p50 {model['p50_ms']:.1f} ms, p95 {model['p95_ms']:.1f} ms")
    verdict = _verdict(rows)
    for line in verdict["lines"]:
        print(line)
    plot(rows, RESULTS / "retrieve_latency.png")
    save(
        "retrieve_latency",
        {
            "queries": len(queries),
            "runs": args.runs,
            "buffered_turns": BUFFERED_TURNS,
            "rows": rows,
            "query_embedding": model,
            "targets": verdict["targets"],
        },
    )


def _verdict(rows: list[dict[str, Any]]) -> dict[str, Any]:
    single = {row["memories"]: row for row in rows if row["callers"] == 1}
    targets: dict[str, Any] = {}
    lines = []
    if 10_000 in single:
        p95 = single[10_000]["p95_ms"]
        targets["p95_ms_at_10k"] = {
            "value": p95,
            "target": TARGET_P95_MS_AT_10K,
            "met": p95 <= TARGET_P95_MS_AT_10K,
        }
        lines.append(f"p95 at 10k: {p95:.1f} ms (target ≤ {TARGET_P95_MS_AT_10K:.0f} ms)")
    if 10_000 in single and 100_000 in single:
        growth = single[100_000]["p95_ms"] / single[10_000]["p95_ms"]
        targets["p95_growth_10k_to_100k"] = {
            "value": growth, "target": TARGET_GROWTH_10K_TO_100K, "met": growth <= TARGET_GROWTH_10K_TO_100K,
        }  # fmt: skip
        lines.append(f"p95 growth 10k → 100k: x{growth:.2f} (target ≤ x{TARGET_GROWTH_10K_TO_100K:.0f})")
    return {"targets": targets, "lines": lines}


if __name__ == "__main__":
    main()
