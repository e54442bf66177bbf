"""Fixtures shared by the unit tests that run a use case on every engine backend under a clock
the test moves (expiry, retention, fact life)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_engine.engine import Engine
from tests.fakes.engine import ENGINE_BACKENDS
from tests.fakes.ports import SetClock


@pytest.fixture
def clock() -> SetClock:
    return SetClock()


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest, clock: SetClock) -> Iterator[Engine]:
    """An engine on each backend (local and moto), reading `clock`."""
    with ENGINE_BACKENDS[request.param](clock=clock) as engine:
        yield engine
