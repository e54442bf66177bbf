"""Bring a search index loaded from disk back in line with the store, the system of record.

The index's high-water mark is the set of memory ids it holds: memories the store has and the
index lacks (written while the index folder was lost, or by a run that died before its next
checkpoint) are indexed, and memories the index has but the store no longer does are deleted
from it. Long jobs log what they do and show a progress bar on stderr.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memory_engine.indexing.documents import index_stored, rebuild
from memory_engine.ports import SearchIndex, Store

__all__ = ["logged_rebuild", "sync"]

log = logging.getLogger("memory_engine.index")
_BATCH = 500


@contextmanager
def _bar(desc: str, total: int | None = None) -> Iterator[Any]:
    from tqdm import tqdm

    with tqdm(total=total, unit=" memories", desc=desc, mininterval=1.0) as bar:
        yield bar


def sync(
    store: Store, index: SearchIndex, held: dict[str, set[str]], stored: dict[str, set[str]]
) -> tuple[int, int]:
    """Index the memories `stored` has and `held` lacks, delete those only `held` has.

    `held` is what the index holds per tenant, `stored` what the store holds. Returns (indexed,
    deleted) memory counts.
    """
    deleted = 0
    missing: list[tuple[str, list[str]]] = []
    for tenant in sorted(held.keys() | stored.keys()):
        extra = held.get(tenant, set()) - stored.get(tenant, set())
        if extra:
            index.delete(tenant, sorted(extra))
            deleted += len(extra)
        lacking = sorted(stored.get(tenant, set()) - held.get(tenant, set()))
        if lacking:
            missing.append((tenant, lacking))
    total = sum(len(ids) for _, ids in missing)
    if deleted:
        log.warning(
            "index: %d memories were in the index but not in the store; deleted from the index", deleted
        )
    if not total:
        return 0, deleted
    log.warning("index: %d memories of the store are missing from the index; indexing them", total)
    with _bar("index catch-up", total) as bar:
        for tenant, ids in missing:
            for start in range(0, len(ids), _BATCH):
                memories = list(store.get_memories(tenant, ids[start : start + _BATCH]).values())
                index_stored(store, index, memories)
                bar.update(len(ids[start : start + _BATCH]))
    return total, deleted


def logged_rebuild(store: Store, index: SearchIndex, reason: str) -> int:
    """Rebuild the whole index from the store, saying why, with a progress bar."""
    log.warning("index: %s; rebuilding it from the store", reason)
    with _bar("index rebuild") as bar:
        count = rebuild(store, index, progress=lambda n: bar.update(n - bar.n))
    log.warning("index: rebuilt from the store (%d memories)", count)
    return count
