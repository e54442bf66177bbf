"""Builder of the chat model behind /v1/chat/completions, and the key of the OpenAI-compatible
endpoint it shares with the LLM extractor. Plain HTTP from the standard library: no `openai`.
"""

from __future__ import annotations

from collections.abc import Callable

from memory_engine.adapters.openai.upstream import HttpChatUpstream
from memory_engine.settings import ChatSettings, LlmEndpointSettings


def chat_upstream(settings: ChatSettings) -> HttpChatUpstream:
    """The chat model behind /v1/chat/completions: OPENAI_BASE_URL (default OpenAI's) and key."""
    return HttpChatUpstream(
        base_url=settings.openai_base_url or "https://api.openai.com/v1",
        api_key=llm_api_key(settings),
        timeout_s=settings.chat_timeout_seconds,
        deadline_s=settings.chat_deadline_seconds,
    )


def llm_api_key(settings: LlmEndpointSettings) -> str | Callable[[], str] | None:
    """The LLM endpoint's key: OPENAI_API_KEY where it is set (local runs), else a reader of the
    Secrets Manager secret named by MEMORY_ENGINE_OPENAI_API_KEY_SECRET (AWS), read when a request
    needs it and cached; None for an endpoint that takes none."""
    if settings.openai_api_key is not None:
        return settings.openai_api_key.get_secret_value()
    if settings.openai_api_key_secret:
        from memory_engine.adapters.aws.secrets import secret_reader  # boto3: only for a secret

        return secret_reader(
            settings.openai_api_key_secret,
            region=settings.aws_region,
            max_age_s=settings.openai_api_key_max_age_seconds,
            what="The LLM key (MEMORY_ENGINE_OPENAI_API_KEY_SECRET)",
        )
    return None
