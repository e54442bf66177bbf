"""e5 against EmbeddingGemma in one run: retrieval quality and what each costs (issue 41, item 4).

    GEMMA_MODEL_DIR=~/.cache/memory-engine/gemma/embeddinggemma-300m \
        python -m bench.quality.embedders [--quick]

For each embedder — multilingual-e5-small (the default), EmbeddingGemma-300M float32 and int8,
and EmbeddingGemma cut to 256 dimensions (Matryoshka, from the float32 vectors) — the same run
measures:

- LoCoMo dev through the engine (bench/quality/locomo_retrieval.py): the default engine and every
  ablation that shares its ingestion, Recall@5/@10, NDCG@10 per category;
- the project's Korean set and its English translation (default engine);
- query embedding p50/p95 (one question per call, as a retrieve embeds it), passages per second
  (LoCoMo lines in batches of 32, as the worker embeds a job), resident memory after loading and
  embedding, first start (a fresh process to its first vector, graphs already written), the
  size on disk (weights and graphs) and the vectors' size per document.

Every model's vectors are cached in bench/.cache (embeddings-<name>.pkl), so re-runs embed only
what is new. Saved as bench/results/embedders.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import RESULTS, save, stamped
from bench.quality.locomo.data import default_data, load
from bench.quality.locomo.engine_run import CachingEmbedder
from memory_engine.ports import Embedder, EmbedMode

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "bench" / ".cache"
KOREAN = ROOT / "bench" / "data" / "korean"
GEMMA_DIR = Path(
    os.environ.get("GEMMA_MODEL_DIR", Path.home() / ".cache/memory-engine/gemma/embeddinggemma-300m")
)
DEFAULT_NAME = "engine (default)"
DENSE_ONLY = "turns scored by the embedder only"


@dataclass(frozen=True)
class Choice:
    name: str
    model: str
    precision: str = "float32"
    dimension: int | None = None  # Matryoshka cut of the float32 vectors

    @property
    def cache(self) -> str:
        return self.model if self.precision == "float32" else f"{self.model}-{self.precision}"

    @property
    def key(self) -> str:
        return self.cache + (f"-{self.dimension}" if self.dimension else "")

    def settings(self) -> dict[str, str]:
        """The MEMORY_ENGINE_* variables that choose it."""
        env = {"MEMORY_ENGINE_EMBEDDER": self.model, "MEMORY_ENGINE_EMBEDDING_PRECISION": self.precision}
        if self.model == "gemma":
            env["MEMORY_ENGINE_EMBEDDING_MODEL_DIR"] = str(GEMMA_DIR)
            env["MEMORY_ENGINE_GEMMA_DIMENSION"] = str(self.dimension or 768)
        return env

    def recorded(self) -> dict[str, str]:
        """`settings()` as a committed result holds them: a folder by its last part, not this
        machine's path (as `bench.provenance.environment` records the run's own variables)."""
        return {name: _last_part(value) for name, value in self.settings().items()}


def _last_part(value: str) -> str:
    return f".../{Path(value).name}" if os.path.isabs(value) else value


CHOICES = (
    Choice("e5 (multilingual-e5-small, float32, 384)", "e5"),
    Choice("gemma (EmbeddingGemma-300M, float32, 768)", "gemma"),
    Choice("gemma int8 (768)", "gemma", "int8"),
    Choice("gemma 512 (float32, Matryoshka)", "gemma", dimension=512),
    Choice("gemma 256 (float32, Matryoshka)", "gemma", dimension=256),
)


class Truncated:
    """The first `dimension` components of another embedder's vectors, renormalised: what
    MEMORY_ENGINE_GEMMA_DIMENSION does inside the embedder, here over the cached full vectors."""

    def __init__(self, inner: Embedder, dimension: int) -> None:
        self._inner = inner
        self.dimension = dimension

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        import numpy as np

        vectors = np.asarray(self._inner.embed(texts, mode), dtype=np.float32)[:, : self.dimension]
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-6)
        return vectors.tolist()


def model(choice: Choice, threads: int = 0) -> Embedder:
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    if choice.model == "e5":
        return OnnxEmbedder("e5", precision=choice.precision, threads=threads)  # type: ignore[arg-type]
    return OnnxEmbedder("gemma", source=GEMMA_DIR, precision=choice.precision, threads=threads)  # type: ignore[arg-type]


def cached(choice: Choice) -> CachingEmbedder:
    """The choice's model behind its on-disk cache (a Matryoshka cut shares the float32 cache)."""
    from memory_engine.embedding import BoundedEmbedder
    from memory_engine.settings import Settings

    inner = BoundedEmbedder(model(choice), Settings().embed_max_chars)
    return CachingEmbedder(inner, CACHE / f"embeddings-{choice.cache}.pkl")


def quality(choice: Choice, quick: int, quiet: bool, ablations: bool = False) -> dict[str, Any]:
    from bench.quality import locomo_retrieval

    embedder = cached(choice)
    engine_embedder: Embedder = Truncated(embedder, choice.dimension) if choice.dimension else embedder
    out: dict[str, Any] = {}
    runs = {
        "locomo_dev": (default_data(), ["--shared-ingestion-only" if ablations else "--no-ablations"]),
        "korean": (KOREAN / "korean-dialogues.json", ["--no-ablations"]),
        "korean_english": (KOREAN / "english-dialogues.json", ["--no-ablations"]),
    }
    for key, (data, extra) in runs.items():
        scratch = CACHE / f"embedders-{key}-{choice.cache}-{choice.dimension or 'full'}.json"
        argv = ["--data", str(data), "--no-plot", "--results", str(scratch), *extra]
        argv += ["--profile", choice.model]  # ranked with its embedder's profile (retrieval.config.PROFILES)
        if quiet:
            argv.append("--quiet")
        if quick and key == "locomo_dev":
            argv += ["--conversations", str(quick)]
        started = time.perf_counter()
        # The harness's turn-level dense baseline runs on the same embedder: its "MiniLM over
        # turns" row is this embedder alone over turns here.
        locomo_retrieval.main(argv, embedder=engine_embedder)
        embedder.save()
        saved = json.loads(scratch.read_text())
        systems = saved["systems"]
        out[key] = {
            "seconds": round(time.perf_counter() - started, 1),
            "questions": saved["questions"],
            "engine": systems[DEFAULT_NAME],
            "rows": {name: rows["all"] for name, rows in systems.items()},
        }
    return out


QUESTIONS = [
    "What did Caroline research after the support group?",
    "When did Melanie paint a sunrise?",
    "지훈이는 언제 부산에 갔어?",
    "What is the name of the user's dog?",
    "민지 님이 못 먹는 음식이 뭐예요?",
    "Where did they go hiking last summer?",
]


def speed(choice: Choice, lines: list[str], repeats: int) -> dict[str, Any]:
    """Query p50/p95 and passages/s in this process (2 threads, the machine's cores), RSS after."""
    embedder = model(choice)
    if choice.dimension:
        embedder = Truncated(embedder, choice.dimension)
    embedder.embed(["warm up"], "query")
    latencies: list[float] = []
    for _ in range(repeats):
        for question in QUESTIONS:
            started = time.perf_counter()
            embedder.embed([question], "query")
            latencies.append((time.perf_counter() - started) * 1000)
    rates: list[float] = []
    for start in range(0, len(lines), 32):
        batch = lines[start : start + 32]
        started = time.perf_counter()
        embedder.embed(batch, "passage")
        rates.append(len(batch) / (time.perf_counter() - started))
    latencies.sort()
    return {
        "query_ms_p50": round(statistics.median(latencies), 1),
        "query_ms_p95": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
        "passages_per_s": round(statistics.median(rates), 1),
        "queries": len(latencies),
        "passage_batches": len(rates),
    }


_FIRST_VECTOR = """
import resource, sys, time
started = time.perf_counter()
from memory_engine.composition import wiring
from memory_engine.settings import Settings
embedder = wiring.build_embedder(Settings())
embedder.embed(["hello"], "query")
first = time.perf_counter() - started
embedder.embed([l.strip() for l in sys.stdin][:64], "passage")
print(first, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def first_start(choice: Choice, lines: list[str]) -> dict[str, Any]:
    """A fresh process: import, build from the settings, first query vector (graphs written
    before); then 64 passages, and the process's peak resident memory."""
    env = {**os.environ, **choice.settings()}
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_VECTOR],
        input="\n".join(lines[:64]),
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ROOT,
    )
    seconds, rss_kb = done.stdout.split()[-2:]
    return {"first_vector_s": round(float(seconds), 2), "peak_rss_mb": round(int(rss_kb) / 1024)}


def retrieve_child(key: str, size: int, count: int) -> None:
    """In a process whose MEMORY_ENGINE_BENCH_DIM is the choice's dimension: `retrieve` over the
    fixture's data folder of `size` memories (bench/speed/index_fixture.py: synthetic vectors of
    that length, LoCoMo text), each call embedding its LoCoMo question with the real model.
    Prints the p50/p95 milliseconds as JSON."""
    from dataclasses import replace

    from bench.common import locomo_questions, percentile
    from bench.speed import retrieve_latency
    from memory_engine.embedding import BoundedEmbedder
    from memory_engine.settings import Settings

    choice = next(c for c in CHOICES if c.key == key)
    engine, _ = retrieve_latency.load(size)
    embedder: Embedder = BoundedEmbedder(model(choice), Settings().embed_max_chars)
    if choice.dimension:
        embedder = Truncated(embedder, choice.dimension)
    engine = replace(engine, embedder=embedder)
    questions, _ = locomo_questions(count, retrieve_latency._synthetic)
    retrieve_latency.timed(engine, questions[0])  # warm: the model loads
    samples = [retrieve_latency.timed(engine, question)[0] for question in questions]
    print(
        json.dumps(
            {"p50_ms": round(statistics.median(samples), 1), "p95_ms": round(percentile(samples, 0.95), 1)}
        )
    )


def retrieve_at(choice: Choice, size: int, count: int) -> dict[str, Any]:
    """Retrieve p50/p95 at `size` memories, timed in a child process; kept in bench/.cache with
    the commit that timed it (delete the file to time it again), so a later `--retrieve-only` run
    adds it to the saved rows without timing it twice."""
    from bench import provenance

    kept = CACHE / f"retrieve-{choice.key}-{size}.json"
    timing = json.loads(kept.read_text()) if kept.is_file() else {}
    if not timing:
        dimension = choice.dimension or (384 if choice.model == "e5" else 768)
        env = {**os.environ, "MEMORY_ENGINE_BENCH_DIM": str(dimension)}
        command = ["--retrieve-child", choice.key, str(size), str(count)]
        done = subprocess.run(
            [sys.executable, "-m", "bench.quality.embedders", *command],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=ROOT,
        )
        timing = json.loads(done.stdout.strip().splitlines()[-1])
        timing["commit"] = provenance.commit()
        kept.write_text(json.dumps(timing) + "\n")
    return {
        f"retrieve_{size // 1000}k_ms_p50": timing["p50_ms"],
        f"retrieve_{size // 1000}k_ms_p95": timing["p95_ms"],
        "retrieve_commit": timing["commit"],
    }


def disk(choice: Choice) -> dict[str, Any]:
    """Weights and graphs on disk, MB; a stored vector's bytes (float32)."""
    from memory_engine.adapters.local.encoders import encoder
    from memory_engine.adapters.local.onnx_export import GRAPHS, default_dir

    if choice.model == "e5":
        from memory_engine.adapters.local.e5_file import packaged_bin

        weights = packaged_bin().stat().st_size
        folder = default_dir(encoder("e5"))
    else:
        weights = sum(p.stat().st_size for p in GEMMA_DIR.rglob("*") if p.is_file() and p.suffix != ".ipynb")
        folder = default_dir(encoder("gemma", GEMMA_DIR))
    graph = (folder / GRAPHS[choice.precision]).stat().st_size
    dimension = choice.dimension or (384 if choice.model == "e5" else 768)
    return {
        "weights_mb": round(weights / 1e6),
        "graph_mb": round(graph / 1e6),
        "dimension": dimension,
        "vector_bytes": dimension * 4,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", type=int, default=0, help="only the first N LoCoMo conversations")
    parser.add_argument(
        "--ablations", action="store_true", help="LoCoMo's ablations that share the default's ingestion too"
    )
    parser.add_argument("--repeats", type=int, default=5, help="rounds of the 6 questions per model")
    parser.add_argument("--skip-quality", action="store_true", help="the costs only")
    parser.add_argument(
        "--only", default="", help="comma-separated keys: e5, gemma, gemma-int8, gemma-512, gemma-256"
    )
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--retrieve",
        type=int,
        default=0,
        help="also time retrieve (query embedding included) at this many memories (e.g. 10000)",
    )
    parser.add_argument(
        "--retrieve-only", action="store_true", help="only the retrieve timing, into saved rows"
    )
    parser.add_argument(
        "--retrieve-child", nargs=3, metavar=("KEY", "SIZE", "QUERIES"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.retrieve_child:
        key, size, count = args.retrieve_child
        retrieve_child(key, int(size), int(count))
        return 0
    conversations = load(default_data())
    lines = [turn.line() for turn in conversations[0].turns][:96]
    choices = [c for c in CHOICES if not args.only or c.key in args.only.split(",")]
    saved = RESULTS / "embedders.json"
    # Rows of choices not run now are kept (each row carries its own commit and load).
    rows: list[dict[str, Any]] = json.loads(saved.read_text())["rows"] if saved.is_file() else []
    for choice in choices:
        print(f"== {choice.name}", file=sys.stderr)
        if args.retrieve_only:
            found = [r for r in _side_rows() if r["name"] == choice.name]
            row = found[0] if found else {"name": choice.name}
            row.update(retrieve_at(choice, args.retrieve, 60))
            (CACHE / f"embedders-row-{choice.key}.json").write_text(json.dumps(row) + "\n")
            rows = [r for r in _side_rows() if r["name"] != choice.name] + [row]
            rows.sort(key=lambda r: [c.name for c in CHOICES].index(r["name"]) if r["name"] in _NAMES else 99)
            save("embedders", {"benchmark": "embedders", "rows": rows})
            continue
        row = {"name": choice.name, "settings": choice.recorded()}
        row.update(graphs(choice))
        row.update(disk(choice))
        row.update(first_start(choice, lines))
        row.update(speed(choice, lines, args.repeats))
        if args.retrieve:
            row.update(retrieve_at(choice, args.retrieve, 60))
        if not args.skip_quality:
            row["quality"] = quality(choice, args.quick, args.quiet, args.ablations)
        row["quick"] = args.quick
        row = stamped(row)
        # Each row also kept on its own: runs of several choices side by side each save every
        # row any of them has finished (the last to save has them all).
        (CACHE / f"embedders-row-{choice.key}.json").write_text(json.dumps(row) + "\n")
        rows = [r for r in _side_rows() if r["name"] != choice.name] + [row]
        rows.sort(key=lambda r: [c.name for c in CHOICES].index(r["name"]) if r["name"] in _NAMES else 99)
        save("embedders", {"benchmark": "embedders", "rows": rows})
        print(json.dumps({k: v for k, v in row.items() if k != "quality"}), file=sys.stderr)
    return 0


_NAMES = {choice.name for choice in CHOICES}


def _side_rows() -> list[dict[str, Any]]:
    """The saved result's rows, each replaced by the one its choice's last run kept in
    bench/.cache where there is one."""
    saved = RESULTS / "embedders.json"
    rows = {row["name"]: row for row in (json.loads(saved.read_text())["rows"] if saved.is_file() else [])}
    for choice in CHOICES:
        path = CACHE / f"embedders-row-{choice.key}.json"
        if path.is_file():
            rows[choice.name] = json.loads(path.read_text())
    return list(rows.values())


def graphs(choice: Choice) -> dict[str, Any]:
    """The seconds writing the model's ONNX graphs took (once per machine: first start on a fresh
    machine adds them), into a scratch folder; the cache's own copy is written if missing."""
    import tempfile

    from memory_engine.adapters.local.encoders import encoder
    from memory_engine.adapters.local.onnx_export import export

    source = None if choice.model == "e5" else GEMMA_DIR
    model(choice).embed(["write the cached graphs if missing"])
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        export(encoder(choice.model, source), Path(scratch) / "graphs")
        return {"graphs_written_s": round(time.perf_counter() - started, 1)}


if __name__ == "__main__":
    raise SystemExit(main())
