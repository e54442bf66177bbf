"""`memory-engine smoke --timeout`: how long each of the walk's requests may take."""

from __future__ import annotations

from typing import Any

import pytest

from memory_engine_app import cli, smoke
from memory_engine_client.transport import DEFAULT_TIMEOUT


class Stop(Exception):
    pass


@pytest.fixture
def timeouts(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The timeout each client the smoke command makes is given (the walk stops there)."""
    seen: list[float] = []

    def client(url: str | None, key: str | None, *, timeout: float, **_: Any) -> None:
        seen.append(timeout)
        raise Stop

    monkeypatch.setattr(smoke, "MemoryEngine", client)
    return seen


def test_the_timeout_given_bounds_every_request_of_the_walk(timeouts: list[float]) -> None:
    with pytest.raises(Stop):
        cli.main(["smoke", "--api", "http://127.0.0.1:9", "--key", "k", "--timeout", "90"])
    assert timeouts == [90.0]


def test_without_one_the_walk_keeps_the_clients_default(timeouts: list[float]) -> None:
    with pytest.raises(Stop):
        cli.main(["smoke", "--api", "http://127.0.0.1:9", "--key", "k"])
    assert timeouts == [DEFAULT_TIMEOUT]


@pytest.mark.parametrize("given", ["0", "-5", "nan", "soon"])
def test_a_timeout_that_is_not_a_positive_number_is_refused_with_how_to_fix_it(
    given: str, timeouts: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    # When smoke is given a timeout of 0, below 0, not a number or no number at all
    with pytest.raises(SystemExit) as exit_status:
        cli.main(["smoke", "--api", "http://127.0.0.1:9", "--key", "k", "--timeout", given])

    # Then it stops with the usage error status before any request, naming the option and a fix
    assert exit_status.value.code == 2
    assert timeouts == []
    error = capsys.readouterr().err
    assert "--timeout" in error and "e.g. 90" in error
