"""Restart: `memory-engine serve` on a data folder with N memories, to its first successful retrieve.

    python -m bench.speed.restart [--sizes 10000 100000] [--runs 3] [--keep] [--baseline ../main-checkout]

The data folders are `bench.speed.index_fixture`'s (9 index documents per memory, all in one thread).
Each run starts the real local server in a fresh process (real ONNX query embedder, SQLite
store, the persisted local index loaded and checked against the store), posts a retrieve every
50 ms from the moment the process is spawned, and stops the clock at the first 200 with hits.
Then it reads the server's resident memory (VmRSS, and VmHWM: the peak) and stops it with
SIGTERM. One warm-up start per size goes first, so the page cache holds the files as it would
after any earlier run (cold-disk starts are slower by the disk's read time). `--keep` keeps the
saved rows of sizes not measured now. `--baseline` names other checkouts (each with its own
data folder, as its index format names it): their starts interleave with this one's, so before
and after are measured under the same load.

Writes bench/results/restart.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from bench.common import ROOT, kept, median, print_table, save, stamped
from bench.speed.index_fixture import THREAD, data_dir

KEY = "bench-restart-key"
TARGET_S_AT_100K = 10.0
TARGET_RSS_GB_AT_100K = 4.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _retrieve(port: int) -> bool:
    body = json.dumps(
        {"parent_session_uuids": [THREAD], "user_input": {"query": "what did she paint last summer"}}
    ).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/engine/retrieve/",
        data=body,
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status == 200 and bool(json.loads(response.read())["data"])
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _memory_kb(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in {"VmRSS", "VmHWM"}:
            fields[name] = int(value.split()[0])
    return fields


def _pythonpath(root: Path) -> str:
    return f"{root / 'layers' / 'core'}:{root}"


def _data_dir(root: Path, size: int) -> Path:
    """The data folder of `size` memories as the checkout at `root` names (and builds) it."""
    if root == ROOT:
        return data_dir(size)
    done = subprocess.run(
        [sys.executable, "-c", f"from bench.speed.index_fixture import data_dir; print(data_dir({size}))"],
        env={**os.environ, "PYTHONPATH": _pythonpath(root)},
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip().splitlines()[-1])


def _revision(root: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or root.name


def start_once(folder: Path, timeout_s: float = 600, root: Path = ROOT) -> dict[str, Any]:
    port = _free_port()
    env = {
        **os.environ,
        "MEMORY_ENGINE_DATA_DIR": str(folder),
        "MEMORY_ENGINE_API_KEY": KEY,
        "PYTHONPATH": _pythonpath(root),
    }
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "memory_engine_app.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not _retrieve(port):
            if server.poll() is not None:
                raise RuntimeError(f"the server exited: {server.stderr.read() if server.stderr else ''}")
            if time.perf_counter() - started > timeout_s:
                raise TimeoutError("no successful retrieve")
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
        memory = _memory_kb(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
    return {
        "first_retrieve_s": elapsed,
        "rss_mb": memory["VmRSS"] / 1024,
        "peak_rss_mb": memory["VmHWM"] / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the saved rows of other sizes")
    parser.add_argument("--baseline", type=Path, nargs="*", default=[], help="other checkouts to compare")
    args = parser.parse_args()

    trees = [ROOT, *[path.resolve() for path in args.baseline]]
    labels = {root: _revision(root) for root in trees}
    rows = []
    for size in args.sizes:
        folders = {root: _data_dir(root, size) for root in trees}
        by_tree: dict[Path, list[dict[str, Any]]] = {root: [] for root in trees}
        for root in trees:
            start_once(folders[root], root=root)  # warm-up: page cache, ONNX export cache
        for _ in range(args.runs):
            for root in trees:
                by_tree[root].append(start_once(folders[root], root=root))
        summary = {root: _summary(folders[root], by_tree[root]) for root in trees}
        rows.append(
            stamped({
                "memories": size,
                "documents": size * 9,
                **summary[ROOT],
                "baselines": {labels[root]: summary[root] for root in trees if root != ROOT},
            })
        )  # fmt: skip
        versus = "".join(
            f", {label} {b['first_retrieve_s']:.1f} s" for label, b in rows[-1]["baselines"].items()
        )
        print(
            f"  {size:,} memories: first retrieve after {rows[-1]['first_retrieve_s']:.1f} s{versus}",
            flush=True,
        )
    if args.keep:
        rows = kept("restart", "rows", rows, set(args.sizes))
    print_table(
        ["memories", "documents", "to first retrieve s", "RSS MB", "peak RSS MB", "index files MB"],
        [
            [
                r["memories"],
                r["documents"],
                r["first_retrieve_s"],
                r["rss_mb"],
                r["peak_rss_mb"],
                r["index_files_mb"],
            ]
            for r in rows
        ],
    )
    targets: dict[str, Any] = {}
    at_100k = next((r for r in rows if r["memories"] == 100_000), None)
    if at_100k:
        targets["restart_s_at_100k"] = {
            "value": at_100k["first_retrieve_s"], "target": TARGET_S_AT_100K,
            "met": at_100k["first_retrieve_s"] <= TARGET_S_AT_100K,
        }  # fmt: skip
        rss_gb = at_100k["peak_rss_mb"] / 1024
        targets["peak_rss_gb_at_100k"] = {
            "value": rss_gb, "target": TARGET_RSS_GB_AT_100K, "met": rss_gb <= TARGET_RSS_GB_AT_100K,
        }  # fmt: skip
    for name, target in targets.items():
        verdict = "met" if target["met"] else "MISSED"
        print(f"{name}: {target['value']:.2f} (target {target['target']}) — {verdict}")
    # The checkout's folder name, not its absolute path: the results are committed.
    baselines = {labels[root]: root.name for root in trees if root != ROOT}
    save("restart", {"revision": labels[ROOT], "baselines": baselines, "rows": rows, "targets": targets})


def _summary(folder: Path, runs: list[dict[str, Any]]) -> dict[str, Any]:
    files = (folder / "memory-engine.sqlite3.index").rglob("*")
    index_mb = sum(path.stat().st_size for path in files if path.is_file()) / 2**20
    return {
        "first_retrieve_s": median([r["first_retrieve_s"] for r in runs]),
        "rss_mb": median([r["rss_mb"] for r in runs]),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "index_files_mb": index_mb,
        "runs": runs,
    }


if __name__ == "__main__":
    main()
