"""A tenant's retention: how many days its memories (extracted ones and facts alike) are kept.

The store stamps every memory it saves for the tenant with the expiry its retention gives
(`Store.set_retention`, `Memory.retained`), so the retention is one more expiry: no read returns
a memory past it, the sweep removes it with the cascade of a delete, and on AWS DynamoDB's TTL
backs the sweep up. Setting a retention also stamps the memories already stored, a page at a
time, so none outlives it.
"""

from __future__ import annotations

from collections.abc import Callable

from memory_engine.errors import InvalidInput
from memory_engine.ports import Store

MAX_RETENTION_DAYS = 36_500
_PAGE = 200


def set_retention(
    store: Store, tenant: str, days: int | None, progress: Callable[[int], None] | None = None
) -> int:
    """Keep the tenant's memories `days` days (None: until deleted); returns how many stored
    memories got an earlier expiry from it."""
    if days is not None and not 1 <= days <= MAX_RETENTION_DAYS:
        raise InvalidInput(
            f"A retention is 1 to {MAX_RETENTION_DAYS} days (got {days}); "
            "set none to keep memories until deleted.",
            [{"field": "days", "message": f"1 to {MAX_RETENTION_DAYS}"}],
        )
    store.set_retention(tenant, days)
    stamped = 0
    if days is None:
        return stamped
    after: str | None = None
    while page := store.memories_after(tenant, after, _PAGE):
        for memory in page:
            retained = memory.retained(days)
            if retained is not memory:
                stamped += store.update_memory(retained)
        if progress:
            progress(stamped)
        if len(page) < _PAGE:
            break
        after = page[-1].memory_id
    return stamped
