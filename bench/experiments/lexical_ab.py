"""The local index's lexical half on tantivy against SQLite FTS5 (issue 36's second candidate).

    python -m bench.experiments.lexical_ab [--sizes 10000 100000] [--rounds 3] [--queries 200]

Both halves get the same documents: the retrieve benchmark fixture's (`bench.speed.index_fixture`:
9 per memory, text drawn from LoCoMo dev turns by the same seeded generators; no vectors, no HNSW),
written chunk by chunk into `LexicalIndex` and `Fts5LexicalIndex`, the order alternating from chunk
to chunk; the seconds each spends writing are its build time (its ingest rate). The pair is built
once per size under $MEMORY_ENGINE_BENCH_CACHE and reused.

Then `--rounds` rounds each start one fresh process per candidate, the order alternating from
round to round, which opens the built index and runs the LoCoMo dev questions as a retrieve's
lexical half does: `search` of both kinds (k 50 memories, 100 turns) over the fixture's one thread
(`whole`, as `LocalSearchIndex` passes it there), each with `named` doc ids standing in for the
dense hits (50 and 100 drawn at random per question, the same for both). Per retrieve (both kinds)
p50/p95 wall ms, the same with the thread filter applied, resident memory added by opening and
searching (VmRSS after minus before), and what a write of 3 memories (27 documents) into the
non-empty index costs (median ms; the documents are deleted again). The figures are medians over
the rounds. The top-10 overlap of the two rankings per kind is the sanity check that they answer
the same question. Writes bench/results/lexical_ab.json.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.common import ROOT, locomo_questions, median, percentile, print_table, save, stamped
from bench.speed.index_fixture import _CHUNK, TENANT, THREAD, _memory, cache_root, corpus
from memory_engine.adapters.local.lexical import Stored
from memory_engine.indexing.documents import index_documents, spoken_line
from memory_engine.ports import DocKind, IndexDocument

CANDIDATES = ("tantivy", "fts5")
K: dict[DocKind, int] = {"memory": 50, "turn": 100}
VERSION = 1  # of the cached pair of indexes: bump when the documents or either schema change


def documents(start: int, stop: int) -> Iterator[list[IndexDocument]]:
    """The fixture's documents of memories start..stop in its chunks: the same text as
    `index_fixture._made` draws (a seeded generator per chunk), one-number vectors."""
    import numpy as np

    turns, vector, vectors = corpus(), np.zeros(1), np.zeros((8, 1))
    for first in range(start, stop, _CHUNK):
        text_rng = random.Random(first)
        made = [_memory(i, turns, text_rng, vector, vectors) for i in range(first, min(stop, first + _CHUNK))]
        yield [doc for memory, sources in made for doc in index_documents(memory, sources)]


def _open(name: str, folder: Path) -> Any:
    if name == "tantivy":
        from memory_engine.adapters.local.lexical import LexicalIndex

        (folder / "tantivy").mkdir(parents=True, exist_ok=True)
        return LexicalIndex(folder / "tantivy")
    from bench.experiments.fts5_lexical import Fts5LexicalIndex

    return Fts5LexicalIndex(folder / "fts5.sqlite3")


def built(memories: int) -> Path:
    """The cached folder holding both indexes of `memories` memories, built first if need be."""
    folder = cache_root() / f"lexical-ab-v{VERSION}-{memories}"
    if (folder / "built.json").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    indexes = {name: _open(name, folder) for name in CANDIDATES}
    seconds = dict.fromkeys(CANDIDATES, 0.0)
    ids: dict[str, list[str]] = {"memory": [], "turn": []}
    for chunk, docs in enumerate(documents(0, memories)):
        for name in CANDIDATES if chunk % 2 == 0 else CANDIDATES[::-1]:
            began = time.perf_counter()
            indexes[name].write(docs)
            seconds[name] += time.perf_counter() - began
        for doc in docs:
            ids[doc.kind].append(doc.doc_id)
        print(f"  built {len(ids['memory']):,} memories: {seconds}", flush=True)
    for name, index in indexes.items():
        began = time.perf_counter()
        index.close()  # tantivy lets its merges finish here: part of its build
        seconds[name] += time.perf_counter() - began
    (folder / "ids.json").write_text(json.dumps(ids))
    count = len(ids["memory"]) + len(ids["turn"])
    (folder / "built.json").write_text(json.dumps({"documents": count, "build_s": seconds}))
    return folder


def _disk_mb(name: str, folder: Path) -> float:
    paths = (folder / "tantivy").rglob("*") if name == "tantivy" else folder.glob("fts5.sqlite3*")
    return sum(path.stat().st_size for path in paths if path.is_file()) / 2**20


def _rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def probe(name: str, folder: Path, queries: int, passes: int, jobs: int) -> dict[str, Any]:
    """One candidate in this process: open, search, write (see the module's docstring)."""
    from bench.speed.retrieve_latency import _synthetic
    from memory_engine.retrieval.text import tokenize

    questions, source = locomo_questions(queries, _synthetic)
    terms = [tokenize(question) for question in questions]
    ids = json.loads((folder / "ids.json").read_text())
    rng = random.Random(5)  # the same named ids for both candidates
    named = [{kind: rng.sample(ids[kind], K[kind]) for kind in K} for _ in questions]
    memories = len(ids["memory"])
    del ids
    before = _rss_mb()
    began = time.perf_counter()
    index = _open(name, folder)
    open_s = time.perf_counter() - began

    def retrieve(at: int, whole: bool) -> tuple[float, dict[str, list[str]]]:
        began = time.perf_counter()
        found = {
            kind: index.search(kind, TENANT, [THREAD], terms[at], K[kind], named[at][kind], whole)
            for kind in K
        }
        took = 1000 * (time.perf_counter() - began)
        return took, {
            kind: [_key(found[kind].stored[doc]) for doc in list(found[kind].lexical)[:10]] for kind in K
        }

    for at in range(min(10, len(terms))):
        retrieve(at, True)
    walls: list[float] = []
    top: list[dict[str, list[str]]] = []
    for _ in range(passes):
        for at in range(len(terms)):
            took, best = retrieve(at, True)
            walls.append(took)
            top.append(best)
    filtered = [retrieve(at, False)[0] for at in range(len(terms))]
    after = _rss_mb()
    writes = _writes(index, memories, jobs)
    index.close()
    return {
        "p50_ms": median(walls), "p95_ms": percentile(walls, 0.95),
        "filtered_p50_ms": median(filtered), "filtered_p95_ms": percentile(filtered, 0.95),
        "open_s": open_s, "rss_delta_mb": after - before, "peak_rss_mb": _rss_mb("VmHWM"),
        "write_ms": median(writes), "write_p95_ms": percentile(writes, 0.95),
        "questions_from": source, "top10": top[: len(terms)],
    }  # fmt: skip


def _key(stored: Stored) -> str:
    """What a top 10 is compared by: a memory's id; a turn's line without its date, because the
    fixture repeats each LoCoMo line (~136 copies at 100k memories, dated apart) and the copies tie
    on any question without a date, so which copies make a top 10 is an arbitrary tie break."""
    return spoken_line(stored.text, stored.occurred_at) if stored.memory_id else stored.doc_id


def _writes(index: Any, memories: int, jobs: int) -> list[float]:
    """ms per write of 3 new memories (27 documents) into the index, each deleted again after."""
    took = []
    for docs in documents(memories, memories + 3 * jobs):
        for at in range(0, len(docs), 27):
            batch = docs[at : at + 27]
            began = time.perf_counter()
            index.write(batch)
            took.append(1000 * (time.perf_counter() - began))
            index.write(deleted=[(doc.kind, doc.tenant, doc.doc_id) for doc in batch])
    return took


def _probed(name: str, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """`probe` in a fresh process: its resident memory is that candidate's alone."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.experiments.lexical_ab", "--probe", name, str(folder),
         "--queries", str(args.queries), "--passes", str(args.passes), "--jobs", str(args.jobs)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"{name}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def overlap(a: list[dict[str, list[str]]], b: list[dict[str, list[str]]]) -> dict[str, float]:
    """Per kind, the mean share of one candidate's top 10 that the other's holds too (by `_key`)."""
    from collections import Counter

    shares: dict[str, list[float]] = {kind: [] for kind in K}
    for mine, theirs in zip(a, b, strict=True):
        for kind in K:
            if mine[kind] or theirs[kind]:
                common = sum((Counter(mine[kind]) & Counter(theirs[kind])).values())
                shares[kind].append(common / max(len(mine[kind]), len(theirs[kind])))
    return {kind: sum(values) / len(values) if values else 0.0 for kind, values in shares.items()}


def matching(folder: Path, queries: int) -> dict[str, float]:
    """Per kind, the median share of its documents that a question's terms match: what FTS5,
    lacking WAND, scores for every search."""
    from bench.experiments.fts5_lexical import Fts5LexicalIndex
    from bench.speed.retrieve_latency import _synthetic
    from memory_engine.retrieval.text import tokenize

    index = Fts5LexicalIndex(folder / "fts5.sqlite3")
    questions, _ = locomo_questions(queries, _synthetic)
    shares = {
        f"matched_{kind}": median([index.matching(kind, tokenize(question)) for question in questions])
        / index.count(kind)
        for kind in K
    }
    index.close()
    return shares


def _size(memories: int, args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows of one size (one per candidate) and its top-10 overlap."""
    folder = built(memories)
    made = json.loads((folder / "built.json").read_text())
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in CANDIDATES}
    for round_ in range(args.rounds):
        for name in CANDIDATES if round_ % 2 == 0 else CANDIDATES[::-1]:
            runs[name].append(_probed(name, folder, args))
            shown = {key: value for key, value in runs[name][-1].items() if key != "top10"}
            print(f"  {memories:,} memories, round {round_ + 1}, {name}: {shown}", flush=True)
    rows = []
    for name, found in runs.items():
        rows.append(
            stamped({
                "memories": memories, "candidate": name, "documents": made["documents"],
                **{key: median([run[key] for run in found]) for key in _FIGURES},
                "disk_mb": _disk_mb(name, folder), "build_s": made["build_s"][name],
                "ingest_docs_per_s": made["documents"] / made["build_s"][name],
                "rounds": [{key: run[key] for key in _FIGURES} for run in found],
            })
        )  # fmt: skip
    shared = overlap(runs["tantivy"][0]["top10"], runs["fts5"][0]["top10"])
    return rows, {
        "memories": memories, **{f"top10_overlap_{kind}": share for kind, share in shared.items()},
        **matching(folder, args.queries),
    }  # fmt: skip


_FIGURES = (
    "p50_ms", "p95_ms", "filtered_p50_ms", "filtered_p95_ms", "open_s", "rss_delta_mb", "peak_rss_mb",
    "write_ms", "write_p95_ms",
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--passes", type=int, default=2, help="passes over the questions per process")
    parser.add_argument("--jobs", type=int, default=20, help="writes of 3 memories per process")
    parser.add_argument("--probe", nargs=2, metavar=("CANDIDATE", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        name, folder = args.probe
        print(json.dumps(probe(name, Path(folder), args.queries, args.passes, args.jobs)))
        return

    rows, overlaps = [], []
    for memories in args.sizes:
        mine, shared = _size(memories, args)
        rows += mine
        overlaps.append(shared)
    print_table(
        ["memories", "candidate", *_FIGURES, "disk MB", "build s", "ingest docs/s"],
        [[r["memories"], r["candidate"], *(r[key] for key in _FIGURES), r["disk_mb"], r["build_s"],
          r["ingest_docs_per_s"]] for r in rows],
    )  # fmt: skip
    print(overlaps)
    save(
        "lexical_ab",
        {
            "queries": args.queries, "passes": args.passes, "write_jobs": args.jobs,
            "questions_from": _source(), "rows": rows, "overlap": overlaps,
            "ratios": ratios(rows), "fixture": FIXTURE_NOTE,
        },
    )  # fmt: skip


def _source() -> str:
    return locomo_questions(1, str)[1]


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """FTS5's figures over tantivy's, per size: above 1, FTS5 costs more."""
    out = []
    for memories in dict.fromkeys(row["memories"] for row in rows):
        pair = {row["candidate"]: row for row in rows if row["memories"] == memories}
        out.append({
            "memories": memories,
            **{key: pair["fts5"][key] / pair["tantivy"][key] for key in _RATIOS if pair["tantivy"][key]},
        })  # fmt: skip
    return out


_RATIOS = ("p50_ms", "p95_ms", "filtered_p95_ms", "rss_delta_mb", "disk_mb", "build_s", "write_ms")
FIXTURE_NOTE = (
    "bench.speed.index_fixture's documents (one tenant, one memory thread; per memory one memory document "
    "and 8 turn documents, text drawn from LoCoMo dev turns with its seeded generators), written into "
    "both lexical halves in chunks of 2,000 memories, no vectors; named = random doc ids of the kind "
    "(50 memories, 100 turns) standing in for the dense hits, the same for both"
)


if __name__ == "__main__":
    main()
