"""The local server's search index: persisted beside the SQLite file, loaded and checked against
the store at start, shared between the server's threads and its worker.

Only the local server and its CLI open these files (a Lambda function searches OpenSearch), so
this lives with them, not in the Lambda layer.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from memory_engine.composition.backends import database_path
from memory_engine.composition.wiring import build_index, index_choice
from memory_engine.ports import SearchIndex, Store
from memory_engine.settings import Settings

if TYPE_CHECKING:
    from memory_engine.adapters.local.index_files import PersistedIndex

log = logging.getLogger("memory_engine.index")


def local_index(settings: Settings, store: Store) -> SearchIndex:
    """The engine's index in the local server, shared between its threads and its worker (the
    index holds its own reader/writer lock): the local backend's index files, opened and checked
    against the store here; any other choice (OpenSearch, an index rebuilt in memory) from the
    core's factory map."""
    if index_choice(settings) != "files":
        return build_index(settings, store)
    persisted = open_local_index(settings, store)
    freeze_loaded()
    return persisted


def local_index_path(settings: Settings) -> Path:
    """The local index's folder: beside the SQLite file, named after it."""
    return Path(database_path(settings) + ".index")


def open_local_index(settings: Settings, store: Store, fresh: bool = False) -> PersistedIndex:
    """Load the persisted local index, checked against the store (see adapters/local/index_files):
    missing, damaged or `fresh` → rebuilt from the store; behind or ahead of it → the difference
    indexed or deleted. Either way it is checkpointed before the engine uses it."""
    from memory_engine.adapters.local.index_files import IndexFileError, PersistedIndex, stored_memory_ids
    from memory_engine.indexing.sync import logged_rebuild, sync

    directory = local_index_path(settings)
    threshold = settings.local_index_ann_threshold or None
    database = Path(database_path(settings))
    empty = not database.exists() or not any(stored_memory_ids(database).values())
    if not fresh and not directory.exists() and empty:
        # A fresh data dir: nothing to rebuild, and nothing wrong to warn about.
        log.info("index: new index at %s", directory)
        index = PersistedIndex(directory, threshold)
        index.checkpoint()
        return index
    try:
        if fresh:
            raise IndexFileError("a rebuild was asked for")
        index = PersistedIndex.load(directory, threshold)
    except IndexFileError as why:
        index = PersistedIndex(directory, threshold)
        with index.bulk():
            logged_rebuild(store, index, str(why))
        return index
    with index.bulk():
        sync(store, index, index.memory_ids(), stored_memory_ids(database))
    return index


def freeze_loaded() -> None:
    """Take what a start loaded (the index: lists and dicts of ~1M entries at 100k memories, alive
    as long as the process) out of the cyclic collector's sight. Left in, every full collection
    walks them: pauses of up to ~150 ms in the middle of a retrieve (bench.speed.retrieve_latency)."""
    import gc

    gc.collect()
    gc.freeze()
