"""What a new user's `make run` costs: the install (size, torch or not) and the first start.

    python -m bench.speed.first_start [--baseline DIR ...] [--runs 3]

For this checkout and each baseline checkout (another clone or worktree, e.g. of main before a
change), in the same run: a fresh clone of its committed tree (`git clone --local`), `make install`
into a new venv (PyPI's wheels come from pip's cache after the first time, so install seconds are
a cache-warm figure), the venv's size and whether torch is in it; then the local server started on
an empty data folder and an empty model cache, and the seconds until `GET /v1/engine/health/`
answers and until the first `POST /v1/engine/embed/` answers (the model loaded, and on a first
start its graphs written). Starts are repeated `--runs` times, each with an empty cache (median),
and the model cache a first start leaves (the ONNX graphs) is sized too.
Writes bench/results/first_start.json after every step, so a run stopped part-way (an install is
minutes) keeps what it measured; each row says the load it was measured at.
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

from bench.common import ROOT, median, print_table, save, stamped


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
    """Seconds from launching the server to its health answer and to its first embedding, and
    the MB its first start wrote into the empty model cache."""
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
            embedded = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait(timeout=60)
        cache = Path(scratch) / "cache"
        cache_mb = _size(cache) / 2**20 if cache.is_dir() else 0.0
        return {"health_s": health, "first_embedding_s": embedded, "model_cache_mb": cache_mb}


def install(checkout: Path, scratch: Path) -> tuple[Path, dict[str, Any]]:
    """A fresh clone of `checkout`'s committed tree, `make install` in it: the clone and its figures."""
    clone = scratch / checkout.name
    subprocess.run(["git", "clone", "-q", "--local", str(checkout), str(clone)], check=True)
    started = time.perf_counter()
    made = subprocess.run(["make", "-C", str(clone), "install"], capture_output=True, text=True)
    if made.returncode != 0:
        raise RuntimeError(f"make install in {clone} failed:\n{made.stderr[-3000:]}")
    install_s = time.perf_counter() - started
    venv = clone / ".venv"
    site = next((venv / "lib").glob("python*/site-packages"))
    revision = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    row = {
        "checkout": checkout.name,
        "revision": revision,
        "install_s": install_s,
        "venv_mb": _size(venv) / 2**20,
        "torch_installed": (site / "torch").is_dir(),
    }
    return clone, stamped(row)


STARTS = ("health_s", "first_embedding_s", "model_cache_mb")


def with_starts(row: dict[str, Any], starts: list[dict[str, float]]) -> dict[str, Any]:
    """`row` with the medians of the first starts measured so far (each start kept in `starts`)."""
    medians = {key: median([s[key] for s in starts]) for key in STARTS}
    return stamped({**row, **medians, "starts": starts})


def _report(rows: list[dict[str, Any]], runs: int) -> None:
    print_table(
        ["checkout", "revision", "install s", "venv MB", "torch", "health s", "1st embedding s", "cache MB"],
        [
            [r["checkout"], r["revision"], r["install_s"], r["venv_mb"], r["torch_installed"],
             r.get("health_s", "-"), r.get("first_embedding_s", "-"), r.get("model_cache_mb", "-")]
            for r in rows
        ],
    )  # fmt: skip
    save("first_start", {"runs": runs, "python": sys.version.split()[0], "rows": rows})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, nargs="*", default=[], help="other checkouts to compare")
    parser.add_argument("--runs", type=int, default=3, help="first starts per checkout (median)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="first-start-"))
    rows: list[dict[str, Any]] = []
    try:
        for checkout in [*args.baseline, ROOT]:
            clone, row = install(checkout.resolve(), scratch)
            rows.append(row)
            _report(rows, args.runs)
            starts: list[dict[str, float]] = []
            for _ in range(args.runs):
                starts.append(first_start(clone, clone / ".venv"))
                rows[-1] = with_starts(row, starts)
                _report(rows, args.runs)
            shutil.rmtree(clone, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
