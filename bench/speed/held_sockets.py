"""Sockets held open by another process: do health and an authenticated retrieve still answer,
and how fast? (issue #42 §2: 64 idle sockets locked every tenant out.)

    python -m bench.speed.held_sockets [--sockets 500] [--probes 20]

Starts the real local server (`memory-engine serve`, e5 on ONNX Runtime), then for each attack
(none, `--sockets` idle sockets, `--sockets` trickling ones: a request line and then a header byte
every half second; a socket the server closes is opened again at once) another process holds the
sockets while this one sends `--probes` health checks and `--probes` authenticated retrieves, each
on a new connection, one a second apart: the share answered 200 and their p50/p95/max seconds
(a probe that fails counts as its 30 s timeout). Writes bench/results/held_sockets.json with the
machine, its load and the commit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.common import ROOT, percentile, print_table, save
from bench.speed.long_texts import KEY, Config, Server, call, server

PROBE_TIMEOUT_S = 30.0
ATTACKER = ROOT / "tests" / "hardening" / "attacker.py"


@contextmanager
def attack(port: int, count: int, mode: str) -> Iterator[None]:
    if mode == "none":
        yield
        return
    process = subprocess.Popen(
        [sys.executable, str(ATTACKER), str(port), str(count), mode], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        time.sleep(2)  # a few rounds of reopening before the probes
        yield
    finally:
        process.kill()
        process.wait()


def probe(target: Server, probes: int) -> dict[str, Any]:
    timings: dict[str, list[float]] = {"health": [], "retrieve": []}
    answered = {"health": 0, "retrieve": 0}
    retrieve = {"parent_session_uuids": ["t"], "user_input": {"query": "hello"}}
    for _ in range(probes):
        for name, method, path, body, key in (
            ("health", "GET", "/v1/engine/health/", None, None),
            ("retrieve", "POST", "/v1/engine/retrieve/", retrieve, KEY),
        ):
            started = time.perf_counter()
            status, _ = call(target, method, path, body, key, PROBE_TIMEOUT_S)
            took = time.perf_counter() - started
            answered[name] += status == 200
            timings[name].append(took if status == 200 else PROBE_TIMEOUT_S)
        time.sleep(1.0)
    return {
        name: {
            "answered": answered[name] / probes,
            "p50_s": round(percentile(timings[name], 0.5), 3),
            "p95_s": round(percentile(timings[name], 0.95), 3),
            "max_s": round(max(timings[name]), 3),
        }
        for name in timings
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=500)
    parser.add_argument("--probes", type=int, default=20)
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    rows: list[dict[str, Any]] = []
    with server(Config("this", ROOT)) as target:
        for mode in ("none", "idle", "trickle"):
            with attack(target.port, args.sockets, mode):
                found = probe(target, args.probes)
            rows.append({"attack": mode, "sockets": 0 if mode == "none" else args.sockets, **found})
    print_table(
        ["attack", "sockets", "health answered", "health p95 s", "retrieve answered", "retrieve p95 s"],
        [
            [
                r["attack"],
                r["sockets"],
                r["health"]["answered"],
                r["health"]["p95_s"],
                r["retrieve"]["answered"],
                r["retrieve"]["p95_s"],
            ]
            for r in rows
        ],
    )
    save("held_sockets", {"commit": commit, "probes": args.probes, "rows": rows})


if __name__ == "__main__":
    main()
