"""The usage-plan port: per-key rate limits in front of the engine."""

from __future__ import annotations

from typing import Protocol


class UsagePlanKeys(Protocol):
    """Per-key rate limits in front of the engine: API Gateway usage-plan keys on AWS (none locally,
    where the server's token bucket does the job).

    A memory-engine key id has at most one usage-plan key; its value is `auth.usage_key_value(key_id)`,
    which the authorizer returns as the request's usage identifier.
    """

    def add(self, key_id: str) -> None:
        """Give the key id its usage-plan key. Raises Conflict (writing nothing) when that key
        exists already; on any other failure nothing is left behind either."""
        ...

    def remove(self, key_id: str) -> bool:
        """Delete the key id's usage-plan key, in or out of the plan; False when it had none."""
        ...

    def key_ids(self) -> set[str]:
        """The key ids that have a key in the usage plan."""
        ...
