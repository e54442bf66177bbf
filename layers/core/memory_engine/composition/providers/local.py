"""Builders of the local backend's adapters: one SQLite file, no usage plan, an in-memory index."""

from __future__ import annotations

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_keys import SqliteKeyStore
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.adapters.local.usage_plan import NoUsagePlan
from memory_engine.composition.backends import database_path
from memory_engine.errors import Unavailable
from memory_engine.indexing.documents import rebuild
from memory_engine.ports import Store
from memory_engine.settings import KeySettings, QueueSettings, SearchSettings, StorageSettings


def sqlite_store(settings: StorageSettings) -> SqliteStore:
    return SqliteStore(database_path(settings))


def sqlite_queue(settings: QueueSettings) -> SqliteQueue:
    return SqliteQueue(database_path(settings), max_receives=settings.worker_max_receives)


def sqlite_keys(settings: KeySettings) -> SqliteKeyStore:
    return SqliteKeyStore(database_path(settings))


def no_usage_plan(settings: KeySettings) -> NoUsagePlan:
    return NoUsagePlan()


def rebuilt_index(settings: SearchSettings, store: Store | None) -> LocalSearchIndex:
    """An in-process index rebuilt from the store at start (a store without index files beside
    it: DynamoDB without OpenSearch, outside Lambda, as in tests)."""
    if store is None:
        raise Unavailable("An index rebuilt in memory (MEMORY_ENGINE_INDEX=memory) needs its store.")
    index = LocalSearchIndex(ann_threshold=settings.local_index_ann_threshold or None)
    rebuild(store, index)
    return index
