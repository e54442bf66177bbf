"""The e2e tests' wait on the worker (`waits.wait_on_work`): on its work, not on a clock. No
server here: a scripted queue and a clock that moves only when the wait sleeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.e2e.waits import CEILING_S, POLL_S, wait_on_work, wait_started


@dataclass
class Dead:
    id: str
    error: str


@dataclass
class Shown:
    pending: list[Any] | None = field(default_factory=list)
    dead: list[Any] | None = field(default_factory=list)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_it_waits_past_the_idle_seconds_while_a_job_is_queued_or_running() -> None:
    # Given a job that stays in the queue for 100 s before its memory appears
    clock = Clock()

    def queue() -> Shown:
        return Shown(pending=["job"] if clock.now < 100 else [])

    # When the wait allows 30 s without work
    found = wait_on_work(lambda: clock.now >= 100 and "memory", queue, 30, clock=clock, sleep=clock.sleep)

    # Then it waited for the work, well past 30 s
    assert found == "memory" and clock.now >= 100


def test_it_fails_once_no_job_was_queued_or_running_for_the_idle_seconds() -> None:
    # Given an empty queue and a condition that never comes true
    clock = Clock()

    # When the wait allows 30 s without work, then it fails soon after them
    with pytest.raises(AssertionError, match="no job queued or running for 30 s"):
        wait_on_work(lambda: False, Shown, 30, clock=clock, sleep=clock.sleep)
    assert 30 < clock.now <= 30 + 2 * POLL_S


def test_a_job_parked_dead_while_waiting_fails_it_at_once_with_its_error() -> None:
    # Given a dead letter from before, and a job parked dead 5 s into the wait
    clock = Clock()
    old = Dead("1", "an earlier test's")

    def queue() -> Shown:
        if clock.now < 5:
            return Shown(pending=["job"], dead=[old])
        return Shown(pending=[], dead=[old, Dead("2", "the model is gone")])

    # When the wait runs, then it fails at 5 s with the new one's error, not the old one's
    with pytest.raises(AssertionError, match="the model is gone"):
        wait_on_work(lambda: False, queue, 30, clock=clock, sleep=clock.sleep)
    assert clock.now < 5 + 2 * POLL_S


def test_the_ceiling_bounds_a_wait_on_a_job_that_never_ends() -> None:
    # Given a job that stays queued for ever
    clock = Clock()

    # When the wait has a 240 s ceiling, then it fails there, naming the job
    with pytest.raises(AssertionError, match="in 240 s, jobs still queued"):
        wait_on_work(lambda: False, lambda: Shown(pending=["job"]), 30, 240, clock=clock, sleep=clock.sleep)
    assert clock.now <= 240 + 2 * POLL_S


@dataclass
class Process:
    """A subprocess that exits (code 1) at `exits_at` on the clock, or never."""

    clock: Clock
    exits_at: float | None = None

    def poll(self) -> int | None:
        return 1 if self.exits_at is not None and self.clock.now >= self.exits_at else None


def test_a_server_still_starting_after_a_minute_is_waited_for() -> None:
    # Given a server whose process runs and first answers after 72 s (its imports with both cores busy)
    clock = Clock()

    # When its start is waited for
    wait_started(lambda: clock.now >= 72, Process(clock), "the server", clock=clock, sleep=clock.sleep)

    # Then the wait went on past the minute a fixed wait allowed, and ended when it answered
    assert 72 <= clock.now < 72 + 2 * POLL_S


def test_a_server_whose_process_exits_fails_the_start_at_once() -> None:
    # Given a server process that exits after 3 s without ever answering
    clock = Clock()

    # When its start is waited for, then it fails as soon as the process is gone, not at the ceiling
    with pytest.raises(RuntimeError, match="the server exited before it answered"):
        wait_started(lambda: False, Process(clock, exits_at=3), "the server", clock=clock, sleep=clock.sleep)
    assert clock.now < 3 + 2 * POLL_S


def test_a_server_that_never_answers_fails_at_the_ceiling() -> None:
    # Given a server process that runs but never answers
    clock = Clock()

    # When its start is waited for, then it fails once the ceiling has passed
    with pytest.raises(RuntimeError, match="did not answer"):
        wait_started(lambda: False, Process(clock), "the server", clock=clock, sleep=clock.sleep)
    assert CEILING_S < clock.now <= CEILING_S + 2 * POLL_S
