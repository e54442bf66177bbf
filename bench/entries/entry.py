"""One saved result as the performance pages show it: its section's title, what its benchmark
measures, the command that records it and the function that renders its table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.render import generic

Render = Callable[[dict[str, Any]], list[str]]


@dataclass(frozen=True)
class Entry:
    name: str  # bench/results/<name>.json
    title: str
    about: str
    command: str
    render: Render = generic
