"""The local server's per-key token bucket."""

from __future__ import annotations

from memory_engine.edge.ratelimit import RateLimiter


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_passes_and_the_next_request_must_wait_whole_seconds() -> None:
    clock = FakeTime()
    limiter = RateLimiter(rate=2, burst=3, clock=clock)

    passed = [limiter.acquire("k") for _ in range(3)]
    waiting = limiter.acquire("k")

    assert passed == [0, 0, 0]
    assert waiting == 1


def test_tokens_come_back_at_the_configured_rate() -> None:
    clock = FakeTime()
    limiter = RateLimiter(rate=2, burst=1, clock=clock)
    limiter.acquire("k")

    clock.now += 0.5

    assert limiter.acquire("k") == 0
    assert limiter.acquire("k") == 1


def test_a_slow_rate_asks_for_a_longer_wait() -> None:
    limiter = RateLimiter(rate=0.1, burst=1, clock=FakeTime())
    limiter.acquire("k")

    assert limiter.acquire("k") == 10


def test_each_key_has_its_own_bucket() -> None:
    limiter = RateLimiter(rate=1, burst=1, clock=FakeTime())
    limiter.acquire("a")

    assert limiter.acquire("b") == 0
    assert limiter.acquire("a") == 1


def test_a_zero_rate_turns_limiting_off() -> None:
    limiter = RateLimiter(rate=0, burst=1, clock=FakeTime())

    assert {limiter.acquire("k") for _ in range(1000)} == {0}


def test_idle_keys_are_forgotten_beyond_the_bound() -> None:
    limiter = RateLimiter(rate=1, burst=1, clock=FakeTime(), max_keys=2)
    limiter.acquire("a")
    limiter.acquire("b")
    limiter.acquire("c")  # pushes out "a"

    assert limiter.acquire("a") == 0
