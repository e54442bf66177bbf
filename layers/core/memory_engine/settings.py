"""Configuration from the environment, read on first use (never at import)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every knob of the engine. Environment variables are `MEMORY_ENGINE_<FIELD>` unless noted."""

    model_config = SettingsConfigDict(env_prefix="MEMORY_ENGINE_", extra="ignore")

    backend: Literal["local", "aws"] = "local"
    data_dir: Path = Path(".memory-engine")
    api_key: str | None = None

    extraction_threshold: int = Field(20, ge=1, description="buffered turns that queue an extraction")
    batch_size: int = Field(8, ge=1, description="consecutive turns per memory")

    embedder: Literal["minilm"] = "minilm"
    embedding_model_dir: Path | None = None
    embedding_batch_size: int = Field(64, ge=1)

    extractor: Literal["builtin", "llm"] = "builtin"
    # LLM extraction (extractor == "llm"). The endpoint variables are the OpenAI client's own names.
    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("OPENAI_BASE_URL", "MEMORY_ENGINE_OPENAI_BASE_URL")
    )
    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("OPENAI_API_KEY", "MEMORY_ENGINE_OPENAI_API_KEY")
    )
    llm_model: str | None = None
    llm_structured_output: Literal["json_schema", "json_object"] = "json_schema"
    llm_timeout_seconds: float = Field(60.0, gt=0)
    llm_max_output_tokens: int | None = Field(2000, ge=256)
    llm_temperature: float | None = Field(0.0, ge=0, le=2)

    retrieve_default_limit: int = Field(5, ge=1)
    retrieve_max_limit: int = Field(50, ge=1)

    worker_poll_seconds: float = Field(0.05, gt=0)
    worker_max_receives: int = Field(5, ge=1, description="deliveries before a job is parked as dead")
    worker_visibility_seconds: float = Field(30.0, gt=0)

    log_level: str = "INFO"

    # AWS backend (backend == "aws"): the DynamoDB single table, also home of the hashed API keys.
    table_name: str | None = None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def reset_settings() -> None:
    """Forget the cached settings (tests change the environment between cases)."""
    get_settings.cache_clear()
