"""Long texts from one tenant, short turns from another: is the work one request or job can cause
bounded, and shared fairly? (issue #33 §1, scaled to run in minutes on 2 cores.)

    python -m bench.speed.long_texts [--runs 3] [--chars 20000] [--baseline ../main-checkout]

Each run starts the real local server (`memory-engine serve`, e5 on ONNX Runtime, built-in
extractor) twice, on fresh data folders; `--baseline` names other checkouts, `--variant` this one
with other settings (`"2 slots:MEMORY_ENGINE_WORKER_SLOTS=2"`): their runs interleave with this
one's, so before and after are measured under the same load.

1. Client gone: 8 turns of 2 × `--chars` characters are buffered in a thread (below the
   extraction point: no job), a retrieve of that thread is sent and its client leaves after 1 s;
   the server's CPU seconds are read from /proc each second for 30 s: their sum over the first
   10 s, and the last second that used more than 5 % of a core (how long the abandoned work went
   on; an idle server uses ~1 %). Then SIGINT: seconds to exit and the exit status.
2. Fairness: tenant B's 20 short turns (LoCoMo lines) are timed to memories on the idle server
   (`quiet`: from the 20th turn's answer to the first retrieve that returns a memory). Then tenant
   A sends 20 turns of 2 × `--chars` characters to one session (its extraction is queued), and B
   sends 20 more short turns in another session: B's time to memories again (`busy`, capped at
   `--wait`), while retrieves alternate between A's thread and B's (each client gives up after
   `--client-timeout` s, counted as that long). Then SIGINT with A's job in flight.

Writes bench/results/long_texts.json (medians over runs per checkout).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import ROOT, locomo_turns, machine, percentile, print_table, save

KEY = "me_bench-long-texts-key-0123456789"
SHORT_TURNS = 20
LONG_TURNS = 20
GONE_TURNS = 8
PROBE_PAUSE_S = 1.0
GONE_WATCH_S = 30
# An idle server (its worker polling the queue) uses about 1 % of a core.
IDLE_CPU_S_PER_S = 0.05


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _lines() -> list[str]:
    lines = [text for _, _, text in locomo_turns()]
    return lines or [
        f"Speaker {i % 2}: we talked about topic {i % 50}, the weather and a trip." for i in range(2000)
    ]


def long_text(chars: int, seed: int) -> str:
    """About `chars` characters of dialogue lines, different for each seed."""
    lines = _lines()
    out: list[str] = []
    size = 0
    position = (seed * 7919) % len(lines)
    while size < chars:
        line = lines[position % len(lines)]
        out.append(line)
        size += len(line) + 1
        position += 1
    return "\n".join(out)[:chars]


@dataclass(frozen=True)
class Config:
    """A checkout to run, with extra settings."""

    label: str
    root: Path
    env: tuple[tuple[str, str], ...] = ()


@dataclass
class Server:
    root: Path
    data_dir: Path
    port: int
    process: subprocess.Popen[str]
    other_key: str

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> tuple[float, int | None]:
        """SIGINT; seconds to exit (at most 60, then killed) and the exit status."""
        started = time.perf_counter()
        self.process.send_signal(signal.SIGINT)
        try:
            code: int | None = self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            code = None
        return time.perf_counter() - started, code


def _env(root: Path, data_dir: Path, port: int) -> dict[str, str]:
    return {
        **os.environ,
        "PORT": str(port),
        "MEMORY_ENGINE_DATA_DIR": str(data_dir),
        "MEMORY_ENGINE_API_KEY": KEY,
        "MEMORY_ENGINE_RATE_LIMIT_PER_SECOND": "0",
        "PYTHONPATH": f"{root / 'layers' / 'core'}:{root}",
    }


@contextmanager
def server(config: Config) -> Iterator[Server]:
    root = config.root
    with tempfile.TemporaryDirectory(prefix="long-texts-") as folder:
        data_dir, port = Path(folder), _free_port()
        env = {**_env(root, data_dir, port), **dict(config.env)}
        made = subprocess.run(
            [sys.executable, "-m", "memory_engine_app.cli", "keys", "create", "--tenant", "other"],
            env=env,
            cwd=root,  # `-m` puts the working folder first on the path: the checkout's own code
            capture_output=True,
            text=True,
            check=True,
        )
        other_key = made.stdout.strip().splitlines()[0]
        process = subprocess.Popen(
            [sys.executable, "-m", "memory_engine_app.server"],
            env=env,
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        running = Server(root, data_dir, port, process, other_key)
        try:
            wait_until_healthy(running, process, f"the server of {root}")
            # The model warms in the background: one embed waits for it.
            call(running, "POST", "/v1/engine/embed/", {"text": "warm up"}, KEY, 300)
            yield running
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def wait_until_healthy(running: Server, process: subprocess.Popen[str], what: str) -> None:
    """Poll health until the server answers (5 minutes: a model loads on a loaded host)."""
    ends = time.monotonic() + 300
    while call(running, "GET", "/v1/engine/health/", None, None, 5)[0] != 200:
        if time.monotonic() > ends or process.poll() is not None:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.2)


def call(
    target: Server, method: str, path: str, body: Any, key: str | None, timeout: float
) -> tuple[int, Any]:
    """One request on a fresh connection; (0, None) when the client gave up or could not connect."""
    connection = http.client.HTTPConnection("127.0.0.1", target.port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        connection.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    except (OSError, http.client.HTTPException):
        return 0, None
    finally:
        connection.close()


def consolidate(
    target: Server, key: str, session: str, thread: str, uuid: str, query: str, answer: str
) -> None:
    body = {
        "session_uuid": session,
        "parent_session_uuid": thread,
        "new_dialog": {"uuid": uuid, "query": query, "answer": answer},
        "user_name": "Alex",
        "language": "en",
    }
    status, _ = call(target, "POST", "/v1/engine/consolidate/", body, key, 120)
    if status != 200:
        raise RuntimeError(f"consolidate answered {status}")


def retrieve(target: Server, key: str, thread: str, timeout: float) -> tuple[float, bool, bool]:
    """Seconds, whether it answered 200 in time, and whether a memory came back."""
    body = {"parent_session_uuids": [thread], "user_input": {"query": "what did they talk about"}}
    started = time.perf_counter()
    status, answer = call(target, "POST", "/v1/engine/retrieve/", body, key, timeout)
    seconds = time.perf_counter() - started
    memory = status == 200 and any(hit.get("kind") == "memory" for hit in answer.get("data", []))
    return seconds, status == 200, memory


def time_to_memories(target: Server, key: str, session: str, wait: float) -> float | None:
    """B's 20 short turns; seconds from the 20th's answer to a retrieve returning a memory."""
    lines = _lines()
    for n in range(SHORT_TURNS):
        consolidate(target, key, session, session, f"{session}-{n}", lines[n % len(lines)], "I see.")
    started = time.perf_counter()
    while time.perf_counter() - started < wait:
        if retrieve(target, key, session, 30)[2]:
            return time.perf_counter() - started
        time.sleep(0.25)
    return None


def client_gone(config: Config, chars: int) -> dict[str, Any]:
    with server(config) as target:
        for n in range(GONE_TURNS):
            consolidate(
                target, KEY, "gone", "gone", f"gone-{n}", long_text(chars, n), long_text(chars, n + 100)
            )
        body = {"parent_session_uuids": ["gone"], "user_input": {"query": "what did they talk about"}}
        call(target, "POST", "/v1/engine/retrieve/", body, KEY, 1.0)  # the client leaves after 1 s
        per_second: list[float] = []
        last = target.cpu_seconds()
        for _ in range(GONE_WATCH_S):
            time.sleep(1.0)
            now = target.cpu_seconds()
            per_second.append(now - last)
            last = now
        stop_s, code = target.stop()
    busy = [second + 1 for second, used in enumerate(per_second) if used > IDLE_CPU_S_PER_S]
    return {
        "cpu_s_in_10s_after_client_left": round(sum(per_second[:10]), 2),
        "busy_s_after_client_left": max(busy, default=0),
        "stop_s": round(stop_s, 2),
        "exit_code": code,
    }


def fairness(config: Config, chars: int, wait: float, client_timeout: float) -> dict[str, Any]:
    with server(config) as target:
        quiet = time_to_memories(target, target.other_key, "quiet", wait)
        for n in range(LONG_TURNS):
            consolidate(
                target, KEY, "heavy", "heavy", f"heavy-{n}", long_text(chars, n), long_text(chars, n + 100)
            )
        latencies: dict[str, list[float]] = {"heavy": [], "light": []}
        timeouts = {"heavy": 0, "light": 0}
        done = threading.Event()

        def probe() -> None:
            # One retrieve of each thread every PROBE_PAUSE_S: a client asking, not a load generator.
            while not done.wait(PROBE_PAUSE_S):
                for thread, key in (("heavy", KEY), ("light", target.other_key)):
                    seconds, answered, _ = retrieve(target, key, thread, client_timeout)
                    latencies[thread].append(min(seconds, client_timeout))
                    timeouts[thread] += 0 if answered else 1

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        busy = time_to_memories(target, target.other_key, "light", wait)
        done.set()
        prober.join(client_timeout + 5)
        stop_s, code = target.stop()
    return {
        "quiet_time_to_memories_s": None if quiet is None else round(quiet, 2),
        "busy_time_to_memories_s": None if busy is None else round(busy, 2),
        **{
            f"retrieve_{thread}_p{share}_s": round(percentile(values, share / 100), 2) if values else None
            for thread, values in latencies.items()
            for share in (50, 95)
        },
        "retrieves": {thread: len(values) for thread, values in latencies.items()},
        "retrieve_timeouts": timeouts,
        "stop_with_job_in_flight_s": round(stop_s, 2),
        "exit_code_with_job_in_flight": code,
    }


def _label(root: Path) -> str:
    """A baseline by its folder's name ("main"), this checkout by its commit."""
    if root != ROOT:
        return root.name
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return f"this checkout ({done.stdout.strip() or 'no git'})"


def _variant(text: str) -> Config:
    """`LABEL:NAME=VALUE[,NAME=VALUE...]`: this checkout with those settings."""
    label, _, settings = text.partition(":")
    pairs = [item.split("=", 1) for item in settings.split(",") if item]
    return Config(f"{_label(ROOT)}, {label}", ROOT, tuple((name, value) for name, value in pairs))


def _median(rows: list[dict[str, Any]], field: str) -> Any:
    values = [row[field] for row in rows if isinstance(row.get(field), int | float)]
    missing = sum(1 for row in rows if row.get(field) is None)
    if missing > len(rows) / 2:
        return None  # most runs never got there: the median is "past the cap"
    return round(statistics.median(values), 2) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--chars", type=int, default=20_000, help="characters of each long query and answer")
    parser.add_argument("--wait", type=float, default=180.0, help="longest wait for B's memories (s)")
    parser.add_argument(
        "--client-timeout", type=float, default=30.0, help="a retrieve client gives up after (s)"
    )
    parser.add_argument("--baseline", type=Path, action="append", default=[], help="other checkouts")
    parser.add_argument("--variant", action="append", default=[], help="LABEL:NAME=VALUE,... (this checkout)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    configs = [
        *(Config(path.resolve().name, path.resolve()) for path in args.baseline),
        Config(_label(ROOT), ROOT),
        *(_variant(text) for text in args.variant),
    ]
    runs: dict[str, list[dict[str, Any]]] = {config.label: [] for config in configs}
    for run in range(args.runs):
        for config in configs:
            row = {
                "run": run + 1,
                **client_gone(config, args.chars),
                **fairness(config, args.chars, args.wait, args.client_timeout),
            }
            runs[config.label].append(row)
            print(json.dumps({"code": config.label, **row}), file=sys.stderr, flush=True)
    fields = [
        "quiet_time_to_memories_s",
        "busy_time_to_memories_s",
        "retrieve_heavy_p95_s",
        "retrieve_light_p95_s",
        "cpu_s_in_10s_after_client_left",
        "busy_s_after_client_left",
        "stop_s",
        "stop_with_job_in_flight_s",
    ]
    summary = {
        label: {
            **{field: _median(rows, field) for field in fields},
            "exit_codes": sorted(
                {row["exit_code"] for row in rows} | {row["exit_code_with_job_in_flight"] for row in rows},
                key=str,
            ),
        }
        for label, rows in runs.items()
    }
    print_table(
        ["code", *fields, "exit codes"],
        [[name, *(row[f] for f in fields), row["exit_codes"]] for name, row in summary.items()],
    )
    payload = {
        "benchmark": "long_texts",
        "scenario": {
            "long_turns": LONG_TURNS,
            "chars_per_query_and_answer": args.chars,
            "short_turns": SHORT_TURNS,
            "client_gone_turns": GONE_TURNS,
            "wait_cap_s": args.wait,
            "client_timeout_s": args.client_timeout,
        },
        "note": "medians over runs; None: most runs passed the cap (wait_cap_s, or the client timeout)",
        "summary": summary,
        "settings": {config.label: dict(config.env) for config in configs if config.env},
        "runs": runs,
        "machine": machine(),
    }
    path = save("long_texts", payload, args.out)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
