"""Builder of the LLM extractor (memories and short facts alike) on an OpenAI-compatible endpoint,
with the settings only it reads.

This module imports `openai`: it loads only where MEMORY_ENGINE_EXTRACTOR=llm is chosen.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from memory_engine.adapters.openai import LlmExtractor, chat_client
from memory_engine.adapters.openai.client import RetryPolicy
from memory_engine.composition.providers.chat import llm_api_key
from memory_engine.errors import Unavailable
from memory_engine.settings import ExtractionSettings, Piece, none_word


class LlmExtractorSettings(Piece):
    """How the LLM extractor asks its model, read when it is built (the model's name, the
    endpoint and the batch's deadline stay with `ExtractionSettings`)."""

    # How the answer's schema reaches the server (adapters/openai/modes.py); a server that refuses
    # one mode (an error naming the response format) moves the extractor to the next.
    llm_structured_output: Literal["json_schema", "json_object_schema", "json_object"] = "json_schema"
    # Sized for a small model on a CPU (Qwen2.5-1.5B on 2 cores: 47-158 s a request, 4 minutes
    # under load); a hosted model answers in seconds and never comes near them.
    llm_timeout_seconds: float = Field(300.0, gt=0, description="per LLM request")
    # Korean takes about twice the tokens of English for the same memory (a 1.5B model's Korean
    # answer used 1,909 of 2,000): bench/results/llm_extraction.json.
    # `none` (or empty) sends no value: OpenAI's reasoning models reject both.
    llm_max_output_tokens: Annotated[int | None, BeforeValidator(none_word)] = Field(4000, ge=256)
    llm_temperature: Annotated[float | None, BeforeValidator(none_word)] = Field(0.0, ge=0, le=2)
    # Repairs and fresh tries: at the first request's 0 a model tends to give the same answer again.
    llm_retry_temperature: float = Field(0.7, ge=0, le=2)
    # Answers that miss the schema before a job gives up (repairs included); then it is parked.
    llm_content_attempts: int = Field(3, ge=1, le=20)


def llm_extractor(
    settings: ExtractionSettings, http_client: Any = None, own: LlmExtractorSettings | None = None
) -> LlmExtractor:
    """The LLM extractor the settings describe (it extracts memories and short facts alike);
    `http_client` (an httpx.Client) carries its requests when given (the benchmark records the
    model's raw answers through it); `own` its own settings, else read from the environment."""
    if not settings.llm_model:
        raise Unavailable(
            "MEMORY_ENGINE_EXTRACTOR=llm needs MEMORY_ENGINE_LLM_MODEL (the model name), and "
            "OPENAI_BASE_URL / OPENAI_API_KEY for any endpoint other than OpenAI's."
        )
    own = own or LlmExtractorSettings()
    return LlmExtractor(
        chat_client()(
            model=settings.llm_model,
            base_url=settings.openai_base_url,
            api_key=llm_api_key(settings),
            structured_output=own.llm_structured_output,
            timeout_s=own.llm_timeout_seconds,
            max_output_tokens=own.llm_max_output_tokens,
            temperature=own.llm_temperature,
            retry_temperature=own.llm_retry_temperature,
            retry=RetryPolicy(
                content_attempts=own.llm_content_attempts, deadline_s=settings.llm_batch_seconds
            ),
            http_client=http_client,
        )
    )
