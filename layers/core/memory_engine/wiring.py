"""The only place where configuration becomes adapter objects: lazily, once per process.

The backend's own adapters (store, queue, key store, usage plan) come from the one lazy map in
`memory_engine.backends`; the search index, embedder and model are chosen by their own settings.

Heavy dependencies (the model, boto3, opensearch, openai) are imported here only when the
configuration picks the adapter that needs them, so a handler's cold start pays for what it uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from threading import Lock
from typing import TYPE_CHECKING, Any

from memory_engine.auth import AnyKey, KeyResolver, SingleKey, StoreKeys, local_api_key
from memory_engine.backends import backend, database_path
from memory_engine.engine import Engine, SystemClock
from memory_engine.errors import Unavailable
from memory_engine.ports import (
    ChatUpstream,
    Embedder,
    Extractor,
    IndexBootstrap,
    JobSource,
    KeyStore,
    Queue,
    SearchIndex,
    Store,
    UsagePlanKeys,
)
from memory_engine.settings import Settings, get_settings

if TYPE_CHECKING:
    from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
    from memory_engine.adapters.local.index_files import PersistedIndex
    from memory_engine.adapters.local.worker import LocalWorker
    from memory_engine.adapters.openai import LlmExtractor
    from memory_engine.extraction.fact_extractor import FactExtractor

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


def installed() -> Engine | None:
    """The engine installed by `use`, if any: commands that build their own adapters defer to it."""
    return _override


@lru_cache(maxsize=1)
def _built_engine() -> Engine:
    settings = get_settings()
    if settings.keys_only:
        raise Unavailable(
            "MEMORY_ENGINE_KEYS_ONLY is set: this process reads API keys only and builds no engine."
        )
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
            facts=build_fact_extractor(settings),
            chat=build_chat_upstream(settings),
        )


def reset() -> None:
    """Forget the built engine (tests that change settings between cases)."""
    _built_engine.cache_clear()
    key_store.cache_clear()
    key_resolver.cache_clear()
    usage_plan_keys.cache_clear()
    use(None)


def build_store(settings: Settings) -> Store:
    return backend(settings).store(settings)


def build_queue(settings: Settings) -> Queue:
    return backend(settings).queue(settings)


def build_index(settings: Settings, store: Store) -> SearchIndex:
    if settings.opensearch_url:
        return build_opensearch_index(settings)
    # Without OpenSearch (refused inside Lambda by the settings): an in-process index. Beside the
    # SQLite store it is persisted next to the database file and loaded at start; beside any other
    # store (DynamoDB without OpenSearch, in tests) it is rebuilt from the store in memory.
    from memory_engine.adapters.local.memory_index import LocalSearchIndex
    from memory_engine.adapters.local.sqlite_store import SqliteStore
    from memory_engine.indexing.documents import rebuild

    threshold = settings.local_index_ann_threshold or None
    if isinstance(store, SqliteStore):
        persisted = open_local_index(settings, store)
        freeze_loaded()
        return persisted
    index = LocalSearchIndex(ann_threshold=threshold)
    rebuild(store, index)
    return index


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
        sync(store, index, index.memory_ids(), stored_memory_ids(Path(database_path(settings))))
    return index


def freeze_loaded() -> None:
    """Take what a start loaded (the index: lists and dicts of ~1M entries at 100k memories, alive
    as long as the process) out of the cyclic collector's sight. Left in, every full collection
    walks them: pauses of up to ~150 ms in the middle of a retrieve (bench.retrieve_latency)."""
    import gc

    gc.collect()
    gc.freeze()


def build_opensearch_index(settings: Settings) -> OpenSearchIndex:
    """The OpenSearch adapter as configured; it sends nothing until first used."""
    if not settings.opensearch_url:
        raise Unavailable("MEMORY_ENGINE_OPENSEARCH_URL is not set: no OpenSearch index to work with.")
    from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex

    return OpenSearchIndex(
        settings.opensearch_url,
        index=settings.opensearch_index,
        dimension=settings.embedding_dimension,
        service=settings.opensearch_service,
        region=settings.aws_region,
        engine=settings.opensearch_engine,
        analyzer=settings.opensearch_analyzer,
    )


def build_embedder(settings: Settings) -> Embedder:
    """The configured model behind the engine's one bound on what embedding may cost: each text
    capped at MEMORY_ENGINE_EMBED_MAX_CHARS, the deadline checked between chunks
    (memory_engine.embedding), whichever model it is."""
    from memory_engine.embedding import BoundedEmbedder

    return BoundedEmbedder(build_model(settings), settings.embed_max_chars)


def build_model(settings: Settings) -> Embedder:
    """The embedding model MEMORY_ENGINE_EMBEDDER names, unbounded (`build_embedder` bounds it)."""
    if settings.embedder in {"lambda", "sagemaker"}:
        from memory_engine.adapters.aws.remote_embedder import RemoteEmbedder

        return RemoteEmbedder(
            dimension=settings.embedding_dimension,
            function_name=settings.embedding_function_name if settings.embedder == "lambda" else None,
            sagemaker_endpoint=settings.sagemaker_endpoint if settings.embedder == "sagemaker" else None,
            batch_size=settings.embedding_batch_size,
            region=settings.aws_region,
        )
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(
        "minilm" if settings.embedder == "minilm" else "e5",
        onnx_dir=settings.embedding_onnx_dir,
        source=settings.embedding_model_dir,
        batch_size=settings.embedding_batch_size,
        threads=settings.embedding_threads,
        precision=settings.embedding_precision,
    )


def local_worker(built: Engine | None = None, sweep: bool = True) -> LocalWorker:
    """The in-process worker over the engine's queue (the configured one by default): each job
    runs through `usecases.jobs.attempt` with the configured retries and backoff, and the worker
    sweeps for stuck buffers at start-up and every MEMORY_ENGINE_WORKER_SWEEP_SECONDS."""
    from memory_engine.adapters.local.worker import LocalWorker
    from memory_engine.usecases import jobs
    from memory_engine.usecases import sweep as sweeping

    target = built or engine()
    source = job_source(target)
    settings = target.settings
    policy = jobs.RetryPolicy.of(settings)
    working = worker_engine(target)
    return LocalWorker(
        source,
        lambda message: jobs.attempt(working, source, message, policy),
        settings.worker_poll_seconds,
        settings.job_visibility_seconds,
        sweep=(lambda: sweeping.run(target)) if sweep else None,
        sweep_seconds=settings.worker_sweep_seconds,
        nice=settings.worker_nice,
        warm=(lambda: working.embedder.embed(["warm up"])) if working is not target else None,
        slots=settings.worker_slots,
    )


def worker_engine(target: Engine) -> Engine:
    """The engine the local worker runs jobs with: the same store, queue, index and caches, and an
    in-process embedder's own copy of the model where it has one (`clone`), so that extraction's
    batches never queue on the threads that embed the requests' queries (the worker's copy loads
    when the worker thread starts, at its lower priority: one more ONNX Runtime session in
    memory, the tokenizer shared, ~160 MB)."""
    clone = getattr(target.embedder, "clone", None)
    copy = clone() if callable(clone) else target.embedder
    return target if copy is target.embedder else dataclasses.replace(target, embedder=copy)


def job_source(built: Engine | None = None) -> JobSource:
    """The consumer side of the engine's queue (the configured engine's by default)."""
    queue = (built or engine()).queue
    if not all(hasattr(queue, name) for name in ("receive", "retry_later", "bury")):
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
    from memory_engine.extraction.fact_extractor import BuiltinFactExtractor

    return BuiltinFactExtractor()


def build_llm_extractor(settings: Settings, http_client: Any = None) -> LlmExtractor:
    """The LLM extractor the settings describe; `http_client` (an httpx.Client) carries its requests
    when given (the benchmark records the model's raw answers through it)."""
    if not settings.llm_model:
        raise Unavailable(
            "MEMORY_ENGINE_EXTRACTOR=llm needs MEMORY_ENGINE_LLM_MODEL (the model name), and "
            "OPENAI_BASE_URL / OPENAI_API_KEY for any endpoint other than OpenAI's."
        )
    from memory_engine.adapters.openai import LlmExtractor, chat_client  # openai loads only when chosen
    from memory_engine.adapters.openai.client import RetryPolicy

    return LlmExtractor(
        chat_client()(
            model=settings.llm_model,
            base_url=settings.openai_base_url,
            api_key=llm_api_key(settings),
            structured_output=settings.llm_structured_output,
            timeout_s=settings.llm_timeout_seconds,
            max_output_tokens=settings.llm_max_output_tokens,
            temperature=settings.llm_temperature,
            retry_temperature=settings.llm_retry_temperature,
            retry=RetryPolicy(
                content_attempts=settings.llm_content_attempts, deadline_s=settings.llm_batch_seconds
            ),
            http_client=http_client,
        )
    )


def build_chat_upstream(settings: Settings) -> ChatUpstream:
    """The chat model behind /v1/chat/completions: OPENAI_BASE_URL (default OpenAI's) and key."""
    from memory_engine.adapters.openai.upstream import HttpChatUpstream  # stdlib HTTP, no openai

    return HttpChatUpstream(
        base_url=settings.openai_base_url or "https://api.openai.com/v1",
        api_key=llm_api_key(settings),
        timeout_s=settings.chat_timeout_seconds,
        deadline_s=settings.chat_deadline_seconds,
    )


def llm_api_key(settings: Settings) -> str | Callable[[], str] | None:
    """The LLM endpoint's key: OPENAI_API_KEY where it is set (local runs), else a reader of the
    Secrets Manager secret named by MEMORY_ENGINE_OPENAI_API_KEY_SECRET (AWS), read when a request
    needs it and cached; None for an endpoint that takes none."""
    if settings.openai_api_key is not None:
        return settings.openai_api_key.get_secret_value()
    if settings.openai_api_key_secret:
        from memory_engine.adapters.aws.secrets import secret_reader

        return secret_reader(
            settings.openai_api_key_secret,
            region=settings.aws_region,
            max_age_s=settings.openai_api_key_max_age_seconds,
            what="The LLM key (MEMORY_ENGINE_OPENAI_API_KEY_SECRET)",
        )
    return None


# -- API keys (the local server and the Lambda authorizer) ----------------------------------------


@lru_cache(maxsize=1)
def key_store() -> KeyStore:
    """Where API keys live: a table of the local database (DynamoDB with the AWS backend)."""
    return build_key_store(get_settings())


def build_key_store(settings: Settings) -> KeyStore:
    return backend(settings).key_store(settings)


@lru_cache(maxsize=1)
def key_resolver() -> KeyResolver:
    """API key → tenant, for the local server and the Lambda REQUEST authorizer alike.

    Keys from the key store always; with the local backend also the single local key
    (MEMORY_ENGINE_API_KEY, or the one generated into the data dir), for tenant `local`.
    Builds no engine: an authorizer loads no model and no index.
    """
    settings = get_settings()
    resolvers: list[KeyResolver] = [StoreKeys(key_store(), SystemClock().now)]
    if backend(settings).single_local_key:
        resolvers.insert(0, SingleKey(local_api_key(settings.api_key, settings.data_dir)[0]))
    return AnyKey(resolvers)


@lru_cache(maxsize=1)
def usage_plan_keys() -> UsagePlanKeys:
    """Where each API key gets its per-key rate limit: the API Gateway usage plan on AWS
    (MEMORY_ENGINE_USAGE_PLAN_ID; without it, issuing a key is refused), nothing locally."""
    return build_usage_plan_keys(get_settings())


def build_usage_plan_keys(settings: Settings) -> UsagePlanKeys:
    return backend(settings).usage_plan_keys(settings)


def bootstrap_index() -> None:
    """Create the configured search index if it needs creating (the deploy-time custom resource)."""
    index = engine().index
    if not isinstance(index, IndexBootstrap):
        raise Unavailable(
            f"The configured search index ({type(index).__name__}) has no ensure_index(): "
            "nothing can create it at deploy time."
        )
    index.ensure_index()
