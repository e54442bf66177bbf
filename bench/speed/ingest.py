"""Ingest: consolidate throughput through the Lambda handler, and extraction latency, locally.

    python -m bench.speed.ingest [--sessions 50] [--turns 40] [--runs 3] [--batches 10]

Consolidate: `functions.consolidate.handler.lambda_handler` fed API Gateway proxy events (the
file in events/, with another body per turn), as the local server and API Gateway call it,
decorators and validation included, on the embedded backend (SQLite file in a fresh folder each
run, store and queue as `make run` builds them). Turns are LoCoMo dev lines, sessions interleaved
as concurrent users would send them. Store write transactions and queue sends are counted per
turn (the local counterpart of "one conditional write per turn, one queue send per threshold
crossing"; the DynamoDB/SQS call counts are `python -m bench.speed.aws_calls`).

Extraction latency: per session, 20 turns are consolidated; from the 20th turn's answer the clock
runs until retrieve finds the batch's memory (the built-in extractor and the engine's embedder,
worker thread as `make run` starts it). Writes bench/results/ingest.json.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import ROOT, locomo_turns, median, percentile, print_table, save
from memory_engine_app import local_engine as served

TARGET_TURNS_PER_S = 1_000
TARGET_EXTRACTION_S = 2.0
THRESHOLD = 20  # the default MEMORY_ENGINE_EXTRACTION_THRESHOLD
TENANT = "bench"


def event_template() -> dict[str, Any]:
    event = json.loads((ROOT / "events" / "consolidate.json").read_text())
    event["requestContext"]["authorizer"] = {"tenant": TENANT, "principalId": TENANT}
    return event


def lines(count: int) -> list[str]:
    texts = [text for _, _, text in locomo_turns()]
    if not texts:
        texts = [f"turn {i}: we talked about the lake and the painting class" for i in range(1000)]
    return [texts[i % len(texts)] for i in range(count)]


def events(sessions: int, turns: int, prefix: str) -> list[dict[str, Any]]:
    """Round-robin over sessions: turn t of every session, then turn t + 1."""
    template = event_template()
    texts = lines(sessions * turns)
    out = []
    for t in range(turns):
        for s in range(sessions):
            speaker, _, text = texts[t * sessions + s].partition(": ")
            body = {
                "session_uuid": f"{prefix}-s{s}",
                "parent_session_uuid": f"{prefix}-thread{s}",
                "new_dialog": {"uuid": f"{prefix}-s{s}-d{t}", "query": text, "answer": ""},
                "user_name": speaker,
                "language": "en",
            }
            event = copy.deepcopy(template)
            event["body"] = json.dumps(body, ensure_ascii=False)
            out.append(event)
    return out


@contextmanager
def local_engine(data_dir: Path) -> Iterator[None]:
    """The configured engine (as `make run` builds it) on a fresh data folder."""
    from memory_engine.composition import wiring
    from memory_engine.settings import reset_settings

    saved = {key: os.environ.get(key) for key in ("MEMORY_ENGINE_DATA_DIR", "POWERTOOLS_METRICS_DISABLED")}
    os.environ["MEMORY_ENGINE_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    reset_settings()
    wiring.reset()
    # As the local server does at start: its engine, with the index files it owns, installed in
    # `wiring` for the handlers (wiring alone refuses to open them).
    served.engine()
    try:
        yield
    finally:
        engine = served.engine()
        for part in (engine.store, engine.queue):
            close = getattr(part, "close", None)
            if close:
                close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        reset_settings()
        wiring.reset()


@contextmanager
def counting(counts: Counter[str]) -> Iterator[None]:
    """Count store write transactions and queue sends of the engine in use."""

    engine = served.engine()
    database = engine.store._db  # type: ignore[attr-defined]
    original_write: Callable[..., Any] = database.write
    original_send = engine.queue.send

    @contextmanager
    def write() -> Iterator[Any]:
        counts["store_writes"] += 1
        with original_write() as conn:
            yield conn

    def send(job: Any) -> None:
        counts["queue_sends"] += 1
        original_send(job)

    database.write = write
    engine.queue.send = send  # type: ignore[method-assign]
    try:
        yield
    finally:
        del database.write
        del engine.queue.send


def consolidate_run(sessions: int, turns: int, run: int) -> dict[str, Any]:
    from functions.consolidate.handler import lambda_handler
    from memory_engine_app.server.apigw import LocalContext

    feed = events(sessions, turns, f"r{run}")
    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as scratch, local_engine(Path(scratch)):
        context = LocalContext()
        lambda_handler(events(1, 1, f"warm{run}")[0], context)  # opens the database, builds the engine
        with counting(counts):
            started = time.perf_counter()
            for event in feed:
                answer = lambda_handler(event, context)
                if answer["statusCode"] != 200:
                    raise AssertionError(f"consolidate failed: {answer['body']}")
            elapsed = time.perf_counter() - started
    return {
        "turns_per_s": len(feed) / elapsed,
        "store_writes_per_turn": counts["store_writes"] / len(feed),
        "queue_sends": counts["queue_sends"],
        # No worker drains the buffers here, so each session's buffer crosses the threshold once.
        "threshold_crossings": sessions if turns >= THRESHOLD else 0,
    }


def extraction_latency(batches: int) -> list[float]:
    """Seconds from the 20th turn's answer until retrieve returns the batch's memory."""
    from functions.consolidate.handler import lambda_handler
    from memory_engine.models.api import RetrieveRequest
    from memory_engine.usecases import retrieve
    from memory_engine_app.server.apigw import LocalContext

    samples = []
    with tempfile.TemporaryDirectory() as scratch, local_engine(Path(scratch)):
        engine = served.engine()
        engine.embedder.embed(["warm up"])  # the model loads at server start, not on a batch
        worker = served.local_worker(engine, sweep=False)
        worker.start()
        try:
            for batch in range(batches):
                feed = events(1, 20, f"x{batch}")
                for event in feed[:-1]:
                    lambda_handler(event, LocalContext())
                thread = json.loads(feed[0]["body"])["parent_session_uuid"]
                lambda_handler(feed[-1], LocalContext())
                started = time.perf_counter()
                request = RetrieveRequest.model_validate(
                    {
                        "parent_session_uuids": [thread],
                        "last_dialog_uuid": "none",
                        "user_input": {"query": json.loads(feed[0]["body"])["new_dialog"]["query"]},
                        "options": {"limit": 50},
                    }
                )
                # Poll the store (cheap), then confirm through retrieve: polling retrieve itself would
                # embed the query every few ms and steal the cores the worker needs.
                session = json.loads(feed[0]["body"])["session_uuid"]
                while True:
                    if engine.store.list_memories(TENANT, session) and any(
                        hit.kind == "memory" for hit in retrieve.run(engine, TENANT, request).data
                    ):
                        break
                    if time.perf_counter() - started > 60:
                        raise AssertionError("no memory after 60 s: is the worker running?")
                    time.sleep(0.005)
                samples.append(time.perf_counter() - started)
        finally:
            worker.stop()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=40, help="turns per session")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batches", type=int, default=10, help="extraction batches timed")
    args = parser.parse_args()

    runs = [consolidate_run(args.sessions, args.turns, run) for run in range(args.runs)]
    for run in runs:
        print(f"  consolidate run: {run['turns_per_s']:,.0f} turns/s", flush=True)
    throughput = median([run["turns_per_s"] for run in runs])
    latency = extraction_latency(args.batches)
    consolidate = {
        "turns": args.sessions * args.turns,
        "turns_per_s": throughput,
        "runs": [run["turns_per_s"] for run in runs],
        "store_writes_per_turn": runs[0]["store_writes_per_turn"],
        "queue_sends": runs[0]["queue_sends"],
        "threshold_crossings": runs[0]["threshold_crossings"],
        "target_turns_per_s": TARGET_TURNS_PER_S,
        "met": throughput >= TARGET_TURNS_PER_S,
    }
    extraction = {
        "batches": len(latency),
        "p50_s": median(latency),
        "p95_s": percentile(latency, 0.95),
        "max_s": max(latency),
        "target_s": TARGET_EXTRACTION_S,
        "met": percentile(latency, 0.95) <= TARGET_EXTRACTION_S,
    }
    print_table(
        ["measure", "value", "target"],
        [
            ["consolidate turns/s (median)", throughput, f"≥ {TARGET_TURNS_PER_S:,}"],
            ["store write transactions per turn", consolidate["store_writes_per_turn"], "1"],
            [
                "queue sends / threshold crossings",
                f"{consolidate['queue_sends']} / {consolidate['threshold_crossings']}",
                "≤ 1 per crossing",
            ],
            ["extraction: 20th turn → retrievable, p50 s", extraction["p50_s"], ""],
            ["extraction: 20th turn → retrievable, p95 s", extraction["p95_s"], f"≤ {TARGET_EXTRACTION_S}"],
        ],
    )
    save("ingest", {"consolidate": consolidate, "extraction": extraction, "sessions": args.sessions})


if __name__ == "__main__":
    main()
