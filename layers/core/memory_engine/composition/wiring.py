"""The only place where configuration becomes the engine, built once per process.

Each adapter comes from its kind's factory map (`memory_engine.composition.providers`), keyed by the setting
that chooses it, and imports its SDK or model only when chosen. API keys are built without an
engine (`key_wiring`); the local server's index files and worker live with it (`memory_engine_app`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from threading import Lock
from typing import TYPE_CHECKING

from memory_engine import ports
from memory_engine import settings as config
from memory_engine.composition.backends import backend
from memory_engine.composition.providers import (
    CHATS,
    EMBEDDERS,
    EXTRACTORS,
    FACT_EXTRACTORS,
    INDEXES,
    QUEUES,
    STORES,
)
from memory_engine.engine import Engine
from memory_engine.errors import Unavailable
from memory_engine.limits import Limits

if TYPE_CHECKING:
    from memory_engine.extraction.fact_extractor import FactExtractor
    from memory_engine.retrieval.config import RetrievalConfig

# Builds the engine's index from the settings and its store.
IndexBuilder = Callable[[config.Settings, ports.Store], ports.SearchIndex]

_override: Engine | None = None
_lock = Lock()


def engine() -> Engine:
    """The process-wide engine (built on first call; tests may install their own with `use`)."""
    if _override is not None:
        return _override
    return _built_engine()


def use(replacement: Engine | None) -> None:
    """Install an engine built elsewhere (the local server, tests, benchmarks); None goes back to
    configuration."""
    global _override
    _override = replacement


def installed() -> Engine | None:
    """The engine installed by `use`, if any: commands that build their own adapters defer to it."""
    return _override


@lru_cache(maxsize=1)
def _built_engine() -> Engine:
    with _lock:
        return assemble(config.get_settings())


def assemble(settings: config.Settings, index: IndexBuilder | None = None) -> Engine:
    """The engine the settings describe; `index` builds its search index where the caller owns
    that choice (the local server's persisted index), else the factory map does."""
    store = build_store(settings)
    return Engine(
        limits=Limits.of(settings),
        store=store,
        queue=build_queue(settings),
        index=(index or build_index)(settings, store),
        embedder=build_embedder(settings),
        extractor=build_extractor(settings),
        facts=build_fact_extractor(settings),
        chat=build_chat_upstream(settings),
        # Ranking weights that suit the configured embedder's dense signal (one map, documented).
        retrieval=_ranking_for(settings.embedder),
    )


def reset() -> None:
    """Forget the built engine and key adapters (tests that change settings between cases)."""
    # Imported here, not at the top: the functions import this module, and none of them but the
    # authorizer (which builds no engine) checks a key.
    from memory_engine.composition import key_wiring

    _built_engine.cache_clear()
    key_wiring.reset()
    use(None)


def build_store(settings: config.StorageSettings) -> ports.Store:
    return STORES.create(settings.backend, settings)


def build_queue(settings: config.QueueSettings) -> ports.Queue:
    return QUEUES.create(settings.backend, settings)


def index_choice(settings: config.SearchSettings) -> str:
    """Which index the settings ask for, the key of `INDEXES`: MEMORY_ENGINE_INDEX where it is
    set; else OpenSearch where its URL is; else the backend's own (its persisted files, or an
    index rebuilt in memory). The server, the functions and every CLI command ask here."""
    if settings.index:
        return settings.index
    return "opensearch" if settings.opensearch_url else backend(settings).index


def build_index(settings: config.SearchSettings, store: ports.Store | None = None) -> ports.SearchIndex:
    """The index `index_choice` names, from `INDEXES`; OpenSearch needs no store (it outlives the
    process), an index rebuilt in memory is rebuilt from `store`."""
    return INDEXES.create(index_choice(settings), settings, store)


def build_embedder(settings: config.EmbeddingSettings) -> ports.Embedder:
    """The configured model behind the engine's one bound on what embedding may cost: each text
    capped at MEMORY_ENGINE_EMBED_MAX_CHARS, the deadline checked between chunks
    (memory_engine.embedding), whichever model it is."""
    from memory_engine.embedding import BoundedEmbedder

    return BoundedEmbedder(build_model(settings), settings.embed_max_chars)


def build_model(settings: config.EmbeddingSettings) -> ports.Embedder:
    """The embedding model MEMORY_ENGINE_EMBEDDER names, unbounded (`build_embedder` bounds it)."""
    return EMBEDDERS.create(settings.embedder, settings)


def build_extractor(settings: config.ExtractionSettings) -> ports.Extractor:
    return EXTRACTORS.create(settings.extractor, settings)


def build_fact_extractor(settings: config.ExtractionSettings) -> FactExtractor:
    return FACT_EXTRACTORS.create(settings.extractor, settings)


def build_chat_upstream(settings: config.ChatSettings) -> ports.ChatUpstream:
    return CHATS.create("openai", settings)


def job_source(built: Engine | None = None) -> ports.JobSource:
    """The consumer side of the engine's queue (the configured engine's by default)."""
    queue = (built or engine()).queue
    if not isinstance(queue, ports.JobSource):
        raise Unavailable("This backend's queue is consumed by the worker Lambda, not polled locally.")
    return queue


def bootstrap_index() -> None:
    """Create the configured search index if it needs creating (the deploy-time custom resource).

    Only the index is built (from the search settings alone: OpenSearch needs no store), never
    the engine's store, embedder or LLM client; an engine installed by `use` lends its own."""
    held = installed()
    if held is not None:
        index = held.index
    else:
        settings = config.loaded(config.SearchSettings)
        choice = index_choice(settings)
        if choice != "opensearch":
            raise Unavailable(
                f"The configured search index (MEMORY_ENGINE_INDEX={choice}) has no ensure_index(): "
                "nothing can create it at deploy time; set MEMORY_ENGINE_OPENSEARCH_URL for OpenSearch."
            )
        index = build_index(settings)
    if not isinstance(index, ports.IndexBootstrap):
        raise Unavailable(
            f"The configured search index ({type(index).__name__}) has no ensure_index(): "
            "nothing can create it at deploy time."
        )
    index.ensure_index()


def _ranking_for(embedder: str) -> RetrievalConfig:
    # Imported when an engine is built: a bank search ranks by distance alone, and its handler's
    # cold start should not pay for the ranking's rules (bench/speed/cold_start).
    from memory_engine.retrieval.config import for_embedder

    return for_embedder(embedder)
