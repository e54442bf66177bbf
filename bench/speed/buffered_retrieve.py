"""Retrieve with many turns waiting for extraction (issue 19, defect 4): what the first retrieve of
a fresh process costs, and the same after the worker stored the buffered turns' vectors.

    python -m bench.speed.buffered_retrieve [--turns 6000] [--sessions 60] [--out FILE]

The engine is the local one (SQLite store, in-memory index, the real ONNX MiniLM embedder) in a
temporary folder; `--turns` turns spread over `--sessions` sessions of one thread stay buffered
(the extraction threshold is set above them). "fresh" is a new engine over the same file: nothing
cached in memory, as after a restart or in a cold Lambda. Each figure is one retrieve (the first
one is the point), so run it twice before quoting; the machine is shared (see bench/common.py).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import print_table, save
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.limits import Limits
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest, UserInput
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import Embedder
from memory_engine.settings import Settings
from memory_engine.usecases import consolidate, extract, retrieve

THREAD = "thread-1"
QUERY = "what did they say about the lighthouse trip"


def engine_over(folder: Path, embedder: Embedder, turns: int) -> Engine:
    path = folder / "memory-engine.sqlite3"
    settings = Settings(data_dir=folder, extraction_threshold=turns + 1, close_earlier_sessions=False)
    return Engine(
        limits=Limits.of(settings),
        store=SqliteStore(path),
        queue=SqliteQueue(path),
        index=LocalSearchIndex(),
        embedder=embedder,
        extractor=BuiltinExtractor(),
    )


def timed_retrieve(engine: Engine) -> float:
    request = RetrieveRequest(parent_session_uuids=[THREAD], user_input=UserInput(query=QUERY))
    started = time.perf_counter()
    retrieve.run(engine, "bench", request)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=6000)
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--out", type=Path, default=None, help="JSON file (default bench/results/)")
    args = parser.parse_args()
    embedder = wiring.build_embedder(Settings())
    embedder.embed(["warm up"])
    rows: list[list[Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        engine = engine_over(folder, embedder, args.turns)
        for n in range(args.turns):
            session = f"s{n % args.sessions}"
            request = {
                "session_uuid": session,
                "parent_session_uuid": THREAD,
                "new_dialog": {"uuid": f"d{n}", "query": f"turn {n}: we talked about trip {n % 97}"},
                "language": "en",
            }
            consolidate.run(engine, "bench", ConsolidateRequest.model_validate(request))
        rows.append(
            [
                "first retrieve, fresh process, nothing embedded",
                timed_retrieve(engine_over(folder, embedder, args.turns)),
            ]
        )
        started = time.perf_counter()
        for number in range(args.sessions):
            extract.run(engine, ExtractionJob(tenant="bench", session_uuid=f"s{number}"))
        worker_s = time.perf_counter() - started
        rows.append(["worker: store every buffered turn's vector", worker_s])
        fresh = engine_over(folder, embedder, args.turns)
        rows.append(["first retrieve, fresh process, vectors stored", timed_retrieve(fresh)])
        rows.append(["second retrieve, same process", timed_retrieve(fresh)])
    print(f"{args.turns} buffered turns in {args.sessions} sessions of one thread")
    print_table(["what", "seconds"], rows)
    payload: dict[str, Any] = {"turns": args.turns, "sessions": args.sessions, "seconds": dict(rows)}
    save("buffered_retrieve", payload, args.out)


if __name__ == "__main__":
    main()
