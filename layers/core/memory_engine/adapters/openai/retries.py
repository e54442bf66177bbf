"""How hard one batch's chat requests are retried, and after how long: the engine's one retry
policy (the openai client's own retries are off: they ignore the batch's deadline)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# The statuses the openai client retries (408/409 under load, 429 rate limits, 5xx the server's own
# trouble); any other (400 bad request, 401 key, 404 model) will not heal.
RETRY_STATUSES = {408, 409, 429}
# The longest Retry-After followed; past it the batch is better failed and retried by the queue.
MAX_RETRY_AFTER_S = 60.0


def retry_after(response: Any) -> float | None:
    """The seconds a 429/503 asks to wait (`Retry-After-Ms`, or `Retry-After` in seconds), when
    it says and the wait is reasonable."""
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if 0 <= seconds <= MAX_RETRY_AFTER_S:
            return seconds
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds on how hard one batch tries before it is reported failed (the queue retries later)."""

    # Requests per answer when the endpoint times out, limits or fails (`ChatClient.complete`
    # retries them within the batch's deadline, after the server's Retry-After or a backoff).
    transport_attempts: int = 4
    content_rounds: int = 2  # fresh tries, each with one repair, when answers do not validate
    # At most this many answers that miss the schema, repairs included (None: every round's two).
    content_attempts: int | None = None
    base_delay_s: float = 1.0  # before a fresh round (the client paces its own retries)
    max_delay_s: float = 30.0
    # A batch's whole bound: no request starts after it, and none runs past it (its timeout is
    # cut to the time left), retries included.
    deadline_s: float = 600.0

    def delay(self, attempt: int) -> float:
        """Exponential backoff between content rounds, capped."""
        return min(max(self.base_delay_s * 2 ** (attempt - 1), 0.0), self.max_delay_s)

    def transport_delay(self, failures: int, draw: Callable[[], float]) -> float:
        """After the n-th failed request: about 0.5·2ⁿ⁻¹ s (at most 8), half of it drawn at random,
        as the openai client paced its own retries."""
        ceiling = min(0.5 * 2 ** (failures - 1), 8.0)
        return ceiling / 2 + draw() * ceiling / 2
