"""A heavy tenant beside a light one on the local server: does the light one's work still come
in time, and does any job run twice? (issue 42 §1: another tenant's 20 short turns took 32.0 s to
become a memory beside a heavy one, retrieves stalled up to 17 s, and a heavy job ran in two
worker slots at once.)

    python -m bench.speed.tenant_fairness [--runs 5] [--chars 100000] [--probes 20] [--baseline DIR]

With `--baseline DIR` (a checkout of the code before a change, run with this checkout's Python
environment) each run starts that checkout's server right after this one's, so both meet the
same load on a shared host; its figures are saved beside (`baseline`).

Each run starts the real local server (`memory-engine serve`, e5 on ONNX Runtime, the built-in
extractor, the shipped settings) on a fresh data folder, its log kept:

1. Idle: tenant B sends 20 short turns (LoCoMo lines) to a thread and waits for a retrieve that
   returns a memory; then retrieves that thread `--probes` times, one a second: B's idle p50/p95.
2. Busy: tenant A sends 20 turns of 2 × `--chars` characters to one session (its extraction job
   is queued at the 20th) while a client of A's retrieves A's thread once a second; then B sends
   20 short turns to a new thread: seconds from its 20th turn's answer to the first retrieve that
   returns a memory (target ≤ 10 s). Meanwhile, and for `--probes` seconds after, another client
   of B's retrieves B's first thread once a second: B's busy p50/p95, and its p95 over the idle
   p95 (target ≤ 3×).
3. No job in two slots at once, checked through the run: the queue's table is read every half
   second (a message delivered more than once while the run went on, `redelivered`), the dead
   letters counted at the end, and the server's log searched for the worker's own words when a
   job's receipt went stale or a job came back while its session's job still ran (`overlaps`).

A client gives up after `--client-timeout` s (counted as that long). Writes
bench/results/tenant_fairness.json (medians over runs; each run's figures kept).
"""

from __future__ import annotations

import argparse
import glob
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import ROOT, percentile, print_table, save
from bench.speed.long_texts import (
    KEY,
    LONG_TURNS,
    SHORT_TURNS,
    Server,
    _env,
    _free_port,
    _lines,
    call,
    consolidate,
    long_text,
    retrieve,
    wait_until_healthy,
)

PROBE_PAUSE_S = 1.0
QUEUE_READ_S = 0.5
# The worker's log lines when a job could have run twice (memory_engine_app/worker.py, usecases/lease.py).
OVERLAP_LINES = ("came back while its session's job still runs", "receipt went stale")
TARGET_TIME_TO_MEMORY_S = 10.0
TARGET_P95_RATIO = 3.0


@dataclass
class Watch:
    """What the queue's table showed while the run went on."""

    reads: int = 0
    in_flight_max: int = 0  # messages held by a worker slot at once
    redelivered: set[int] = field(default_factory=set)  # message ids seen with receive_count > 1


@contextmanager
def serving(log_path: Path, root: Path) -> Iterator[Server]:
    """The local server of the checkout at `root` on a fresh data folder, its log written to `log_path`."""
    with tempfile.TemporaryDirectory(prefix="tenant-fairness-") as folder:
        data_dir, port = Path(folder), _free_port()
        env = _env(root, data_dir, port)
        made = subprocess.run(
            [sys.executable, "-m", "memory_engine_app.cli", "keys", "create", "--tenant", "light"],
            env=env,
            cwd=root,  # `-m` puts the working folder first on the path: that checkout's own code
            capture_output=True,
            text=True,
            check=True,
        )
        light_key = made.stdout.strip().splitlines()[0]
        with log_path.open("w") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "memory_engine_app.server"],
                env=env,
                cwd=root,
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
            )
            running = Server(root, data_dir, port, process, light_key)
            try:
                wait_until_healthy(running, process, "the server")
                call(running, "POST", "/v1/engine/embed/", {"text": "warm up"}, KEY, 300)
                yield running
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()


def _queue_file(data_dir: Path) -> Path | None:
    for name in sorted(glob.glob(str(data_dir / "**" / "*"), recursive=True)):
        path = Path(name)
        if not path.is_file() or path.suffix in {".wal", ".shm"} or path.name.endswith(("-wal", "-shm")):
            continue
        try:
            with path.open("rb") as head:
                if head.read(16) != b"SQLite format 3\x00":
                    continue
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
                conn.execute("SELECT 1 FROM queue_messages LIMIT 1")
            return path
        except (OSError, sqlite3.Error):
            continue
    return None


def watch_queue(data_dir: Path, watch: Watch, done: threading.Event) -> None:
    path: Path | None = None
    while not done.wait(QUEUE_READ_S):
        path = path or _queue_file(data_dir)
        if path is None:
            continue
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
                rows = conn.execute("SELECT id, receive_count, receipt FROM queue_messages").fetchall()
        except sqlite3.Error:
            continue
        watch.reads += 1
        watch.in_flight_max = max(watch.in_flight_max, sum(1 for _, _, receipt in rows if receipt))
        watch.redelivered.update(message for message, count, _ in rows if count > 1)


def dead_letters(data_dir: Path) -> int:
    path = _queue_file(data_dir)
    if path is None:
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM queue_dead").fetchone()[0])


def time_to_memory(target: Server, key: str, thread: str, wait: float, timeout: float) -> float | None:
    """Short turns to `thread`; seconds from the last one's answer to a retrieve with a memory."""
    lines = _lines()
    for n in range(SHORT_TURNS):
        consolidate(target, key, thread, thread, f"{thread}-{n}", lines[n % len(lines)], "I see.")
    started = time.perf_counter()
    while time.perf_counter() - started < wait:
        if retrieve(target, key, thread, timeout)[2]:
            return time.perf_counter() - started
        time.sleep(0.25)
    return None


def probes(target: Server, key: str, thread: str, count: int, timeout: float) -> list[float]:
    taken = []
    for _ in range(count):
        seconds, answered, _ = retrieve(target, key, thread, timeout)
        taken.append(min(seconds, timeout) if answered else timeout)
        time.sleep(PROBE_PAUSE_S)
    return taken


def one_run(
    chars: int, probe_count: int, wait: float, timeout: float, log_path: Path, root: Path = ROOT
) -> dict[str, Any]:
    with serving(log_path, root) as target:
        light = target.other_key
        watch, done = Watch(), threading.Event()
        watcher = threading.Thread(target=watch_queue, args=(target.data_dir, watch, done), daemon=True)
        watcher.start()
        idle_memory = time_to_memory(target, light, "light-idle", wait, timeout)
        idle = probes(target, light, "light-idle", probe_count, timeout)

        busy: list[float] = []
        heavy: list[float] = []
        probing = threading.Event()

        def probe(key: str, thread: str, into: list[float]) -> None:
            # Once a second, each client on its own: a slow answer to A holds up none of B's.
            while not probing.wait(PROBE_PAUSE_S):
                seconds, answered, _ = retrieve(target, key, thread, timeout)
                into.append(min(seconds, timeout) if answered else timeout)

        probers = [
            threading.Thread(target=probe, args=(KEY, "heavy", heavy), daemon=True),
            threading.Thread(target=probe, args=(light, "light-idle", busy), daemon=True),
        ]
        for prober in probers:
            prober.start()
        heavy_started = time.perf_counter()
        for n in range(LONG_TURNS):
            consolidate(
                target, KEY, "heavy", "heavy", f"heavy-{n}", long_text(chars, n), long_text(chars, n + 100)
            )
        heavy_sent_s = time.perf_counter() - heavy_started
        busy_memory = time_to_memory(target, light, "light-busy", wait, timeout)
        time.sleep(probe_count * PROBE_PAUSE_S)  # B's probes go on while A's work does
        probing.set()
        for prober in probers:
            prober.join(timeout + 5)
        done.set()
        watcher.join(10)
        dead = dead_letters(target.data_dir)
        target.stop()
    log = log_path.read_text(errors="replace")
    overlaps = sum(log.count(line) for line in OVERLAP_LINES)
    idle_p95 = percentile(idle, 0.95)
    busy_p95 = percentile(busy, 0.95) if busy else None
    return {
        "idle_time_to_memory_s": None if idle_memory is None else round(idle_memory, 2),
        "busy_time_to_memory_s": None if busy_memory is None else round(busy_memory, 2),
        "heavy_turns_sent_s": round(heavy_sent_s, 1),
        "light_idle_retrieve_p50_s": round(percentile(idle, 0.5), 3),
        "light_idle_retrieve_p95_s": round(idle_p95, 3),
        "light_busy_retrieve_p50_s": round(percentile(busy, 0.5), 3) if busy else None,
        "light_busy_retrieve_p95_s": None if busy_p95 is None else round(busy_p95, 3),
        "light_p95_ratio": None if busy_p95 is None else round(busy_p95 / idle_p95, 2),
        "heavy_retrieve_p95_s": round(percentile(heavy, 0.95), 3) if heavy else None,
        "retrieves": {"light_idle": len(idle), "light_busy": len(busy), "heavy": len(heavy)},
        "queue_reads": watch.reads,
        "jobs_in_flight_max": watch.in_flight_max,
        "redelivered_jobs": len(watch.redelivered),
        "overlaps_in_log": overlaps,
        "dead_letters": dead,
    }


def _median(rows: list[dict[str, Any]], name: str) -> Any:
    values = [row[name] for row in rows if isinstance(row.get(name), int | float)]
    if sum(1 for row in rows if row.get(name) is None) > len(rows) / 2:
        return None  # most runs never got there
    return round(statistics.median(values), 3) if values else None


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    fields = [
        "idle_time_to_memory_s",
        "busy_time_to_memory_s",
        "light_idle_retrieve_p95_s",
        "light_busy_retrieve_p95_s",
        "light_p95_ratio",
        "heavy_retrieve_p95_s",
    ]
    summary: dict[str, Any] = {name: _median(rows, name) for name in fields}
    summary["jobs_run_twice"] = sum(row["redelivered_jobs"] + row["overlaps_in_log"] for row in rows)
    summary["dead_letters"] = sum(row["dead_letters"] for row in rows)
    busy_memory, ratio = summary["busy_time_to_memory_s"], summary["light_p95_ratio"]
    summary["meets_targets"] = (
        busy_memory is not None
        and busy_memory <= TARGET_TIME_TO_MEMORY_S
        and ratio is not None
        and ratio <= TARGET_P95_RATIO
        and summary["jobs_run_twice"] == 0
    )
    return summary


def _commit(root: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chars", type=int, default=100_000, help="characters of each long query and answer")
    parser.add_argument("--probes", type=int, default=20, help="B's retrieves idle, and after its memory")
    parser.add_argument("--wait", type=float, default=120.0, help="longest wait for B's memory (s)")
    parser.add_argument("--client-timeout", type=float, default=30.0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another checkout (the code before a change), run in turn with this one on the same host",
    )
    args = parser.parse_args()
    roots = {"this checkout": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in roots}
    with tempfile.TemporaryDirectory(prefix="tenant-fairness-logs-") as logs:
        for run in range(args.runs):
            for name, root in roots.items():  # in turn: both meet the same load
                log = Path(logs) / f"{name}-{run}.log"
                row = {
                    "run": run + 1,
                    **one_run(args.chars, args.probes, args.wait, args.client_timeout, log, root),
                }
                rows[name].append(row)
                print(json.dumps({"checkout": name, **row}), file=sys.stderr, flush=True)
    summary = _summary(rows["this checkout"])
    baseline = _summary(rows["baseline"]) if "baseline" in rows else None
    print_table(
        ["figure", "median", *(["baseline median"] if baseline else [])],
        [[name, summary[name], *([baseline[name]] if baseline else [])] for name in summary],
    )
    save(
        "tenant_fairness",
        {
            "scenario": {
                "long_turns": LONG_TURNS,
                "chars_per_query_and_answer": args.chars,
                "short_turns": SHORT_TURNS,
                "probes": args.probes,
                "client_timeout_s": args.client_timeout,
                "targets": {"busy_time_to_memory_s": TARGET_TIME_TO_MEMORY_S, "p95_ratio": TARGET_P95_RATIO},
            },
            "note": (
                "medians over runs; None: most runs passed the wait; "
                "a failed retrieve counts as the client timeout"
            ),
            "summary": summary,
            "runs": rows["this checkout"],
            **(
                {
                    "baseline": {
                        "commit": _commit(args.baseline),
                        "summary": baseline,
                        "runs": rows["baseline"],
                    }
                }
                if baseline and args.baseline
                else {}
            ),
        },
        args.out,
    )


if __name__ == "__main__":
    main()
