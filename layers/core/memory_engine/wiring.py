"""The only place where configuration becomes adapter objects: lazily, once per process.

Heavy dependencies (the model, boto3, opensearch, openai) are imported here only when the
configuration picks the adapter that needs them, so a handler's cold start pays for what it uses.
"""

from __future__ import annotations

from functools import lru_cache
from threading import Lock

from memory_engine.engine import Engine
from memory_engine.ports import Embedder, Extractor, Queue, SearchIndex, Store
from memory_engine.settings import Settings, get_settings

_override: Engine | None = None
_lock = Lock()


def engine() -> Engine:
    """The process-wide engine (built on first call; tests may install their own with `use`)."""
    if _override is not None:
        return _override
    return _built_engine()


def use(replacement: Engine | None) -> None:
    """Install an engine built by hand (tests, benchmarks); None goes back to configuration."""
    global _override
    _override = replacement


@lru_cache(maxsize=1)
def _built_engine() -> Engine:
    settings = get_settings()
    with _lock:
        store = build_store(settings)
        index = build_index(settings, store)
        return Engine(
            settings=settings,
            store=store,
            queue=build_queue(settings),
            index=index,
            embedder=build_embedder(settings),
            extractor=build_extractor(settings),
        )


def reset() -> None:
    """Forget the built engine (tests that change settings between cases)."""
    _built_engine.cache_clear()
    use(None)


def database_path(settings: Settings) -> str:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return str(settings.data_dir / "memory-engine.sqlite3")


def build_store(settings: Settings) -> Store:
    from memory_engine.adapters.local.sqlite_store import SqliteStore

    return SqliteStore(database_path(settings))


def build_queue(settings: Settings) -> Queue:
    from memory_engine.adapters.local.sqlite_queue import SqliteQueue

    return SqliteQueue(database_path(settings), max_receives=settings.worker_max_receives)


def build_index(settings: Settings, store: Store) -> SearchIndex:
    from memory_engine.adapters.local.memory_index import LocalSearchIndex
    from memory_engine.usecases.indexing import rebuild

    # The local index lives in memory: it is rebuilt from the store, the system of record.
    index = LocalSearchIndex()
    rebuild(store, index)
    return index


def build_embedder(settings: Settings) -> Embedder:
    from memory_engine.adapters.local.minilm_embedder import MiniLmEmbedder

    return MiniLmEmbedder(settings.embedding_model_dir, settings.embedding_batch_size)


def build_extractor(settings: Settings) -> Extractor:
    from memory_engine.extraction.builtin import BuiltinExtractor

    return BuiltinExtractor()
