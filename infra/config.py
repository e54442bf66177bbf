"""What one deployment is made of, read from CDK context (`cdk.json`, `-c key=value`).

Every knob has a default that deploys; a stage (`dev`, `prod`) only changes the defaults that
protect data and cost money, and any of them can still be set explicitly.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

ROOT = Path(__file__).resolve().parents[1]
SERVICE = "memory-engine"
METRICS_NAMESPACE = "MemoryEngine"
LOG_RETENTION_DAYS = (7, 14, 30, 60, 90, 180, 365)  # the values CloudWatch Logs accepts, in short


# An IAM role or user the data-access policy and a domain's access policy can name.
_PRINCIPAL = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+$")

# The dimension of each model the embedding image can serve (functions/embedder_image/Dockerfile);
# EmbeddingGemma's is its Matryoshka cut, `gemmaDimension`.
IMAGE_MODEL_DIMENSION = {"e5": 384, "minilm": 384, "gemma": 768}
GEMMA_DIMENSIONS = (768, 512, 256, 128)
# Where the embedding image's build copies EmbeddingGemma's folder from (relative to the
# repository root, the build context): Google's release, put there before `cdk deploy`.
GEMMA_FOLDER = "build/embeddinggemma-300m"


class StackConfig(BaseModel):
    """One stage of the service. Context keys are the camelCase field names (`maxReceiveCount`)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid")

    stage: Literal["dev", "prod"] = "dev"

    # Search: OpenSearch Serverless vector collection ("aoss") or a managed OpenSearch domain ("es").
    search: Literal["aoss", "es"] = "aoss"
    index_name: str = Field("memories", pattern=r"^[a-z][a-z0-9_-]{0,200}$")
    # BM25 text analysis: nori (Korean morphology; Serverless and managed domains have the plugin),
    # or cjk / standard for a cluster without it. Fixed when the index is created.
    search_analyzer: Literal["nori", "cjk", "standard"] = "nori"
    # IAM roles or users (comma-separated ARNs) that run `memory-engine create-index` / `reindex`
    # by hand: the Serverless data-access policy, or the domain's access policy, lets them create,
    # update, drop, read and write the index. None: only the stack's own functions reach it.
    search_admin_principals: str | None = None

    # Embedding: the container-image Lambda ("lambda") or an existing SageMaker endpoint.
    embedder: Literal["lambda", "sagemaker"] = "lambda"
    # The image's model (embedder=lambda): multilingual-e5-small ("e5"), all-MiniLM-L6-v2
    # ("minilm"; "onnx", its earlier name, is read as "minilm") or EmbeddingGemma-300M ("gemma":
    # its folder at build/embeddinggemma-300m when the image is built, docs/configuration.md).
    # With embedder=sagemaker it names the endpoint's model, for its default dimension.
    embedding_model: Literal["e5", "minilm", "gemma"] = "e5"
    # EmbeddingGemma's vectors cut to this many dimensions (Matryoshka): 768, 512, 256 or 128.
    gemma_dimension: int = 768
    sagemaker_endpoint: str | None = None
    # The vectors' length, the OpenSearch mapping's: unset, the model's own (`dimension`).
    embedding_dimension: int | None = Field(None, ge=1, le=16_000)

    # Extraction in the worker: the built-in extractor, or any OpenAI-compatible LLM.
    extractor: Literal["builtin", "llm"] = "builtin"
    llm_model: str | None = None
    openai_base_url: str | None = None
    # Secrets Manager secret (its name, or its complete ARN) whose string is the LLM key: read by
    # the functions at run time, never put in their environment.
    openai_api_key_secret: str | None = None

    # Worker and queue. Deliveries of a job before SQS moves it to the dead-letter queue: at least
    # 5, as AWS asks of a queue feeding Lambda (a throttled delivery counts as a receive too).
    max_receive_count: int = Field(5, ge=5, le=1000)
    # Attempts of a failing job before the worker parks it in the DLQ with its error; the redrive
    # above (max_receive_count) is the safety net for a worker that crashed or timed out on it.
    job_attempts: int = Field(3, ge=1, le=100)
    # How often a scheduled rule has the worker sweep for full buffers without a job.
    sweep_minutes: int = Field(15, ge=1, le=1440)
    worker_concurrency: int = Field(10, ge=2, le=1000)  # SQS event source minimum is 2
    worker_timeout_seconds: int = Field(600, ge=30, le=900)

    # API.
    authorizer_cache_seconds: int = Field(300, ge=0, le=3600)
    throttle_rate: float = Field(50, gt=0)
    throttle_burst: int = Field(100, ge=1)
    waf_acl_arn: str | None = None
    # Per API key: the stage's usage plan (the authorizer names each request's key). Requests per
    # second and burst; a quota of requests per period is off unless keyQuotaLimit is set.
    key_throttle_rate: float = Field(25, gt=0)
    key_throttle_burst: int = Field(50, ge=1)
    key_quota_limit: int | None = Field(None, ge=1)
    key_quota_period: Literal["DAY", "WEEK", "MONTH"] = "DAY"

    # Operations.
    alarm_email: str | None = None
    log_retention_days: int | None = None  # stage default when unset
    deletion_protection: bool | None = None  # stage default when unset

    # Where `make layer` put the runtime dependencies (holds `python/`).
    layer_dir: Path = ROOT / "build" / "layer"

    @field_validator("embedding_model", mode="before")
    @classmethod
    def _minilm_by_its_old_name(cls, value: object) -> object:
        return "minilm" if value == "onnx" else value

    @model_validator(mode="after")
    def _coherent(self) -> StackConfig:
        if self.embedder == "sagemaker" and not self.sagemaker_endpoint:
            raise ValueError("embedder=sagemaker needs sagemakerEndpoint (the endpoint name)")
        if self.gemma_dimension not in GEMMA_DIMENSIONS:
            raise ValueError(
                f"gemmaDimension must be one of {GEMMA_DIMENSIONS} (EmbeddingGemma's Matryoshka dimensions)"
            )
        image_dimension = self.model_dimension
        if self.embedder == "lambda" and self.embedding_dimension not in (None, image_dimension):
            # The index and every stored vector follow the model: a mismatch fails every embed call.
            raise ValueError(
                f"embeddingDimension {self.embedding_dimension} does not match the embedding image's "
                f"model ({self.embedding_model}: {image_dimension} dimensions); leave it unset or set "
                f"{image_dimension}, or serve another model with embedder=sagemaker"
            )
        if self.extractor == "llm" and not self.llm_model:
            raise ValueError("extractor=llm needs llmModel (the model name)")
        wrong = [arn for arn in self.admin_principals if not _PRINCIPAL.match(arn)]
        if wrong:
            raise ValueError(
                f"searchAdminPrincipals {wrong} are not IAM role or user ARNs "
                "(arn:aws:iam::<account>:role/<name>, comma-separated)"
            )
        if self.log_retention_days is not None and self.log_retention_days not in LOG_RETENTION_DAYS:
            raise ValueError(f"logRetentionDays must be one of {LOG_RETENTION_DAYS}")
        return self

    @property
    def model_dimension(self) -> int:
        """The dimension of the configured model's vectors."""
        if self.embedding_model == "gemma":
            return self.gemma_dimension
        return IMAGE_MODEL_DIMENSION[self.embedding_model]

    @property
    def dimension(self) -> int:
        """The vectors' length everywhere (functions, OpenSearch mapping): the one set, else the
        model's. A change needs `memory-engine reindex --reembed` (docs/configuration.md)."""
        return self.embedding_dimension or self.model_dimension

    @property
    def admin_principals(self) -> list[str]:
        """`searchAdminPrincipals` as a list of ARNs, in the order given, once each."""
        given = (self.search_admin_principals or "").split(",")
        return list(dict.fromkeys(arn.strip() for arn in given if arn.strip()))

    @property
    def is_prod(self) -> bool:
        return self.stage == "prod"

    @property
    def protect_data(self) -> bool:
        """Deletion protection and retained data: on in prod, off in dev unless set."""
        return self.is_prod if self.deletion_protection is None else self.deletion_protection

    @property
    def retention_days(self) -> int:
        if self.log_retention_days is not None:
            return self.log_retention_days
        return 90 if self.is_prod else 14

    @property
    def stack_name(self) -> str:
        return f"MemoryEngine-{self.stage}"

    @property
    def resource_prefix(self) -> str:
        """Lowercase, short: OpenSearch collection and policy names allow 32 characters."""
        return f"{SERVICE}-{self.stage}"


def from_context(read: Any) -> StackConfig:
    """A config from a context reader (`app.node.try_get_context`); unset keys keep defaults."""
    values: dict[str, Any] = {}
    for name, field in StackConfig.model_fields.items():
        value = read(field.alias or name)
        if value is not None and value != "":
            values[name] = value
    return StackConfig(**values)
