"""Per-key token buckets: the local server's stand-in for an API Gateway usage plan."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """`rate` requests per second per key, with bursts of up to `burst`; rate 0 turns it off.

    Buckets of keys not seen for a while are dropped (LRU, `max_keys`), so memory stays bounded.
    """

    def __init__(
        self,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        self._rate = rate
        self._burst = float(max(burst, 1))
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def acquire(self, key: str) -> int:
        """Take one token for `key`: 0 when the request may go, else whole seconds to wait."""
        if self._rate <= 0:
            return 0
        with self._lock:
            now = self._clock()
            bucket = self._buckets.pop(key, None) or _Bucket(self._burst, now)
            bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.updated) * self._rate)
            bucket.updated = now
            self._buckets[key] = bucket
            while len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return 0
            return max(1, math.ceil((1 - bucket.tokens) / self._rate))
