"""What the doors cost per call: the Python client against hand-written HTTP, and the LangGraph
store's operations, on the local server over HTTP.

    python -m bench.doors [--calls 200] [--runs 3] [--items 50]

The server is bench.concurrency's (assembled as `memory-engine serve` does, fresh data dir, rate
limit off). A thread is seeded with 40 turns (extracted), then `--runs` rounds, each timing in
turn: a retrieve as hand-written JSON over a kept-alive httpx connection (the baseline: what a
caller without the client does), alternating call by call with the same retrieve through
`MemoryEngine.retrieve` (request checked by the API's model, answer read into it), and that
work alone in process (no network, over an answer captured from the server); then the
LangGraph store's put, get and search in a namespace of `--items` items. Reported: the median
over runs of each run's p50 and p95, in ms.
Writes bench/results/doors.json.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.common import median, percentile, print_table, save
from bench.concurrency import KEY, SEEDED, local_server, seed

THREAD = SEEDED
QUERIES = ["what did we talk about", "the weather", "topic 7", "where was the trip", "who came"]


def timed(calls: int, one: Callable[[int], object]) -> list[float]:
    samples = []
    for n in range(calls):
        started = time.perf_counter()
        one(n)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def run_once(port: int, calls: int, items: int, tag: str) -> dict[str, list[float]]:
    from memory_engine_client import MemoryEngine, native
    from memory_engine_langgraph import MemoryEngineStore

    raw = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {KEY}"})

    def by_hand(n: int) -> None:
        query = {"parent_session_uuids": [THREAD], "user_input": {"query": QUERIES[n % len(QUERIES)]}}
        response = raw.post("/v1/engine/retrieve/", json=query)
        assert response.status_code == 200 and response.json()["data"] is not None

    # The client's own work, without the network: the request checked against the API's model and
    # the answer (a real one, captured here) read into the response model.
    answer = raw.post("/v1/engine/retrieve/", json=native.retrieve(THREAD, QUERIES[0]).body).json()

    def own_work(n: int) -> None:
        native.retrieve(THREAD, QUERIES[n % len(QUERIES)]).read(answer)

    with MemoryEngine(f"http://127.0.0.1:{port}", KEY) as engine:

        def with_client(n: int) -> None:
            engine.retrieve(THREAD, QUERIES[n % len(QUERIES)])

        # The two retrieves alternate call by call, each first in turn, so a change in the
        # machine's load hits both alike; every query is asked once before, so neither pays its
        # embedding.
        timed(len(QUERIES), by_hand)
        hand: list[float] = []
        client: list[float] = []
        for n in range(calls):
            pair = [(hand, by_hand), (client, with_client)]
            for kept, call in pair if n % 2 else pair[::-1]:
                kept += timed(1, lambda _: call(n))  # noqa: B023 (called at once)
        store = MemoryEngineStore(engine)
        namespace = ("bench", tag)
        for n in range(items):
            store.put(namespace, f"item-{n}", {"text": f"note {n} about topic {n % 7}"})
        samples = {
            "client's own work per retrieve (no network)": timed(calls, own_work),
            "retrieve, hand-written HTTP": hand,
            "retrieve, MemoryEngine": client,
            "store.put (replace)": timed(
                calls // 4, lambda n: store.put(namespace, f"item-{n}", {"text": "new"})
            ),
            "store.get": timed(calls // 4, lambda n: store.get(namespace, f"item-{n}")),
            "store.search(query)": timed(calls // 4, lambda n: store.search(namespace, query=QUERIES[n % 5])),
        }
    raw.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--items", type=int, default=50)
    args = parser.parse_args()
    runs: list[dict[str, list[float]]] = []
    with tempfile.TemporaryDirectory() as data, local_server(Path(data), None) as (port, pending):
        seed(port, pending, 40)
        for run in range(args.runs):
            runs.append(run_once(port, args.calls, args.items, f"run{run}"))
    rows: list[dict[str, Any]] = []
    for name in runs[0]:
        rows.append(
            {
                "operation": name,
                "calls_per_run": len(runs[0][name]),
                "p50_ms": round(median([median(run[name]) for run in runs]), 2),
                "p95_ms": round(median([percentile(run[name], 0.95) for run in runs]), 2),
            }
        )
    print_table(["operation", "calls/run", "p50 ms", "p95 ms"], [list(row.values()) for row in rows])
    save("doors", {"runs": args.runs, "items": args.items, "rows": rows})


if __name__ == "__main__":
    main()
