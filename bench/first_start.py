"""What a new user's `make run` costs: the install (size, torch or not) and the first start.

    python -m bench.first_start [--baseline DIR ...] [--runs 3]

For this checkout and each baseline checkout (another clone or worktree, e.g. of main before a
change), in the same run: a fresh clone of its committed tree (`git clone --local`), `make install`
into a new venv (PyPI's wheels come from pip's cache after the first time, so install seconds are
a cache-warm figure), the venv's size and whether torch is in it; then the local server started on
an empty data folder and an empty model cache, and the seconds until `GET /v1/engine/health/`
answers and until the first `POST /v1/engine/embed/` answers (the model loaded, and on a first
start its graphs written). Starts are repeated `--runs` times, each with an empty cache (median).
Writes bench/results/first_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.common import ROOT, median, print_table, save


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _call(url: str, key: str | None = None, body: dict[str, Any] | None = None) -> bool:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def first_start(clone: Path, venv: Path) -> dict[str, float]:
    """Seconds from launching the server to its health answer and to its first embedding."""
    with tempfile.TemporaryDirectory() as scratch:
        port = _free_port()
        env = {
            **os.environ,
            "PORT": str(port),
            "MEMORY_ENGINE_DATA_DIR": str(Path(scratch) / "data"),
            "MEMORY_ENGINE_API_KEY": "first-start-key",
            "XDG_CACHE_HOME": str(Path(scratch) / "cache"),
        }
        started = time.perf_counter()
        server = subprocess.Popen(
            [str(venv / "bin" / "python"), "-m", "memory_engine_app.server"],
            cwd=clone,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            while not _call(f"{base}/v1/engine/health/"):
                if server.poll() is not None or time.perf_counter() - started > 600:
                    raise RuntimeError(f"the server in {clone} did not start")
                time.sleep(0.1)
            health = time.perf_counter() - started
            body = {"text": "첫 번째 문장입니다. The first sentence.", "mode": "passage"}
            while not _call(f"{base}/v1/engine/embed/", "first-start-key", body):
                if server.poll() is not None or time.perf_counter() - started > 900:
                    raise RuntimeError(f"the server in {clone} never embedded")
                time.sleep(0.2)
            return {"health_s": health, "first_embedding_s": time.perf_counter() - started}
        finally:
            server.terminate()
            server.wait(timeout=60)


def measure(checkout: Path, runs: int, scratch: Path) -> dict[str, Any]:
    clone = scratch / checkout.name
    subprocess.run(["git", "clone", "-q", "--local", str(checkout), str(clone)], check=True)
    venv = clone / ".venv"
    started = time.perf_counter()
    subprocess.run(["make", "-C", str(clone), "install"], check=True, capture_output=True)
    install_s = time.perf_counter() - started
    site = next((venv / "lib").glob("python*/site-packages"))
    starts = [first_start(clone, venv) for _ in range(runs)]
    revision = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return {
        "checkout": checkout.name,
        "revision": revision,
        "install_s": install_s,
        "venv_mb": _size(venv) / 2**20,
        "torch_installed": (site / "torch").is_dir(),
        "health_s": median([s["health_s"] for s in starts]),
        "first_embedding_s": median([s["first_embedding_s"] for s in starts]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, nargs="*", default=[], help="other checkouts to compare")
    parser.add_argument("--runs", type=int, default=3, help="first starts per checkout (median)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="first-start-"))
    try:
        rows = [measure(checkout.resolve(), args.runs, scratch) for checkout in [*args.baseline, ROOT]]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print_table(
        ["checkout", "revision", "install s", "venv MB", "torch", "health s", "first embedding s"],
        [
            [r["checkout"], r["revision"], r["install_s"], r["venv_mb"], r["torch_installed"], r["health_s"],
             r["first_embedding_s"]]
            for r in rows
        ],
    )  # fmt: skip
    save("first_start", {"runs": args.runs, "python": sys.version.split()[0], "rows": rows})


if __name__ == "__main__":
    main()
