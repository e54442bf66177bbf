"""A new user's first start, on every path that makes the API key: `make run`, `memory-engine serve`
and `memory-engine keys`. The key made for them is printed once, when it is made; a fresh data dir
logs no warning (nothing was wrong: the index is new, not lost)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, free_port

pytestmark = pytest.mark.e2e

NEW_KEY = re.compile(r"API key \(new, shown this once; kept in (?P<file>\S+)\): (?P<key>me_\S+)")


def first_start_env(data_dir: Path, port: int) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "MEMORY_ENGINE_API_KEY"}
    return {
        **env,
        "PORT": str(port),
        "MEMORY_ENGINE_DATA_DIR": str(data_dir),
        "MEMORY_ENGINE_LOG_LEVEL": "INFO",
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "layers" / "core"), str(ROOT), str(ROOT / "clients" / "python")]
        ),
    }


def started_then_stopped(command: Sequence[str], data_dir: Path) -> str:
    """Everything a server printed from its start until it was listening, then stopped (Ctrl-C)."""
    port = free_port()
    process = subprocess.Popen(
        list(command),
        cwd=ROOT,
        env=first_start_env(data_dir, port),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # make's child gets the Ctrl-C too
    )
    assert process.stdout is not None
    printed: list[str] = []
    for line in process.stdout:
        printed.append(line)
        if "listening on" in line:
            break
    os.killpg(process.pid, signal.SIGINT)
    # Read through the same buffered file (communicate() would skip what it already holds); the
    # server stops within its grace period, closing the pipe.
    rest = process.stdout.read()
    process.wait(timeout=60)
    return "".join(printed) + rest


def serve_command() -> list[str]:
    return [sys.executable, "-m", "memory_engine_app.cli", "serve"]


def test_memory_engine_serve_prints_the_key_it_makes_once(tmp_path: Path) -> None:
    # Given an empty data dir and no key in the environment
    # When the server starts twice
    first = started_then_stopped(serve_command(), tmp_path)
    second = started_then_stopped(serve_command(), tmp_path)
    # Then the first start printed the key it made, the one now in the data dir
    made = NEW_KEY.search(first)
    assert made, first
    assert made["key"] == (tmp_path / "api_key").read_text().strip()
    # and the second named the file without printing the key again
    assert made["key"] not in second and "printed when it was made" in second


def test_a_fresh_data_dir_logs_a_new_index_and_no_warning(tmp_path: Path) -> None:
    printed = started_then_stopped(serve_command(), tmp_path)

    assert "new index at" in printed
    assert "rebuilding" not in printed and "no index manifest" not in printed


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_prints_the_key_it_makes_once(tmp_path: Path) -> None:
    # Given a checkout already set up (`make test` installed the venv make run uses)
    make = ["make", "-s", "--no-print-directory", "run", f"PY={sys.executable}"]
    # When a new user runs `make run` on an empty data dir
    printed = started_then_stopped(make, tmp_path)
    # Then the key it made is on screen
    made = NEW_KEY.search(printed)
    assert made and made["key"] == (tmp_path / "api_key").read_text().strip(), printed


def test_memory_engine_keys_prints_a_created_key_once_and_never_lists_it(tmp_path: Path) -> None:
    env = first_start_env(tmp_path, free_port())
    keys = [sys.executable, "-m", "memory_engine_app.cli", "keys"]

    created = subprocess.run([*keys, "create", "--tenant", "acme"], env=env, capture_output=True, text=True)
    listed = subprocess.run([*keys, "list"], env=env, capture_output=True, text=True)

    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert key.startswith("me_") and "not shown again" in created.stderr
    assert listed.returncode == 0 and key not in listed.stdout + listed.stderr
    # keys work on the key store alone: the local server's own key is made by the server, not here
    assert not (tmp_path / "api_key").exists()
