"""The local server's threads share one interpreter: a short request waiting for it gets it after
the configured switch interval, not Python's 5 ms (issue 42: a retrieve beside a heavy tenant)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_engine.settings import ServerSettings, reset_settings
from memory_engine_app.server import app


class Started(Exception):
    """Raised where the server would configure its logs, its first step with effects beyond the
    process's settings: what came before has run."""


@pytest.fixture
def interval() -> Iterator[None]:
    before = sys.getswitchinterval()
    reset_settings()
    yield
    sys.setswitchinterval(before)
    reset_settings()


def test_the_default_switch_interval_is_half_a_millisecond() -> None:
    assert ServerSettings().server_switch_interval_ms == 0.5


def test_the_server_process_switches_threads_at_the_configured_interval(
    interval: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given a configured interval of 0.25 ms and a server stopped once it has read its settings
    monkeypatch.setenv("MEMORY_ENGINE_SERVER_SWITCH_INTERVAL_MS", "0.25")
    monkeypatch.setenv("MEMORY_ENGINE_DATA_DIR", str(tmp_path))

    def configure_logs(*_: Any, **__: Any) -> None:
        raise Started

    monkeypatch.setattr(logging, "basicConfig", configure_logs)
    sys.setswitchinterval(0.005)

    # When the server starts
    with pytest.raises(Started):
        app.serve(port=1)

    # Then a thread waiting for the interpreter gets it after 0.25 ms
    assert sys.getswitchinterval() == pytest.approx(0.00025)


def test_sharing_the_interpreter_sets_the_interval_in_milliseconds(interval: None) -> None:
    app.share_the_interpreter(2.0)

    assert sys.getswitchinterval() == pytest.approx(0.002)
