"""The only place where configuration becomes adapter objects: lazily, once per process.

Heavy dependencies (the model, boto3, opensearch, openai) are imported here only when the
configuration picks the adapter that needs them, so a handler's cold start pays for what it uses.
"""

from __future__ import annotations

from functools import lru_cache
from threading import Lock
from typing import TYPE_CHECKING

from memory_engine.auth import KeyResolver, SingleKey, local_api_key
from memory_engine.engine import Engine
from memory_engine.errors import Unavailable
from memory_engine.ports import Embedder, Extractor, IndexBootstrap, JobSource, Queue, SearchIndex, Store
from memory_engine.settings import Settings, get_settings

if TYPE_CHECKING:
    from memory_engine.adapters.openai import LlmExtractor
    from memory_engine.extraction.facts import FactExtractor

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
    key_resolver.cache_clear()
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


def job_source() -> JobSource:
    """The consumer side of the local queue, for the local worker."""
    queue = engine().queue
    if not hasattr(queue, "receive"):
        raise Unavailable("This backend's queue is consumed by the worker Lambda, not polled locally.")
    return queue  # type: ignore[return-value]


def build_extractor(settings: Settings) -> Extractor:
    if settings.extractor == "llm":
        return build_llm_extractor(settings)
    from memory_engine.extraction.builtin import BuiltinExtractor

    return BuiltinExtractor()


def build_fact_extractor(settings: Settings) -> FactExtractor:
    if settings.extractor == "llm":
        return build_llm_extractor(settings)
    from memory_engine.extraction.facts import BuiltinFactExtractor

    return BuiltinFactExtractor()


def build_llm_extractor(settings: Settings) -> LlmExtractor:
    if not settings.llm_model:
        raise Unavailable(
            "MEMORY_ENGINE_EXTRACTOR=llm needs MEMORY_ENGINE_LLM_MODEL (the model name), and "
            "OPENAI_BASE_URL / OPENAI_API_KEY for any endpoint other than OpenAI's."
        )
    from memory_engine.adapters.openai import LlmExtractor  # openai loads only when chosen

    return LlmExtractor(
        model=settings.llm_model,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
        structured_output=settings.llm_structured_output,
        timeout_s=settings.llm_timeout_seconds,
        max_output_tokens=settings.llm_max_output_tokens,
        temperature=settings.llm_temperature,
    )


@lru_cache(maxsize=1)
def key_resolver() -> KeyResolver:
    """API key → tenant: hashed keys in the table on AWS (the authorizer), the one local key otherwise."""
    settings = get_settings()
    if settings.backend == "aws":
        if not settings.table_name:
            raise Unavailable("MEMORY_ENGINE_BACKEND=aws needs MEMORY_ENGINE_TABLE_NAME (the table name).")
        from memory_engine.adapters.dynamodb_keys import DynamoDbKeyResolver

        return DynamoDbKeyResolver(settings.table_name)
    key, _ = local_api_key(settings.api_key, settings.data_dir)
    return SingleKey(key)


def bootstrap_index() -> None:
    """Create the configured search index if it needs creating (the deploy-time custom resource)."""
    index = engine().index
    if not isinstance(index, IndexBootstrap):
        raise Unavailable(
            f"The configured search index ({type(index).__name__}) has no ensure_index(): "
            "nothing can create it at deploy time."
        )
    index.ensure_index()
