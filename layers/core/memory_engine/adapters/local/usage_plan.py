"""`UsagePlanKeys` for the local server: no usage plan; its per-key token bucket limits requests."""

from __future__ import annotations


class NoUsagePlan:
    """Nothing to enroll: keys are rate-limited by the local server itself (`edge/ratelimit.py`)."""

    def add(self, key_id: str) -> None:
        return None

    def remove(self, key_id: str) -> bool:
        return False

    def key_ids(self) -> set[str]:
        return set()
