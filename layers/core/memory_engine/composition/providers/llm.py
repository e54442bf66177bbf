"""Builder of the LLM extractor (memories and short facts alike) on an OpenAI-compatible endpoint.

This module imports `openai`: it loads only where MEMORY_ENGINE_EXTRACTOR=llm is chosen.
"""

from __future__ import annotations

from typing import Any

from memory_engine.adapters.openai import LlmExtractor, chat_client
from memory_engine.adapters.openai.client import RetryPolicy
from memory_engine.composition.providers.chat import llm_api_key
from memory_engine.errors import Unavailable
from memory_engine.settings import ExtractionSettings


def llm_extractor(settings: ExtractionSettings, http_client: Any = None) -> LlmExtractor:
    """The LLM extractor the settings describe (it extracts memories and short facts alike);
    `http_client` (an httpx.Client) carries its requests when given (the benchmark records the
    model's raw answers through it)."""
    if not settings.llm_model:
        raise Unavailable(
            "MEMORY_ENGINE_EXTRACTOR=llm needs MEMORY_ENGINE_LLM_MODEL (the model name), and "
            "OPENAI_BASE_URL / OPENAI_API_KEY for any endpoint other than OpenAI's."
        )
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
