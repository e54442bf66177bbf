"""The chat route's model list (`GET /v1/models`): what an OpenAI-style front-end shows to pick from.

The engine relays whatever model a request names to its upstream; the list names the model a
request without one gets (MEMORY_ENGINE_CHAT_MODEL), so a front-end that insists on choosing from
the list can connect. Nothing is asked of the upstream: listing stays free and always answers.
"""

from __future__ import annotations

from memory_engine.models.chat import ModelCard, ModelList
from memory_engine.settings import ChatSettings


def list_models(settings: ChatSettings) -> ModelList:
    """The configured default chat model, or an empty list when none is configured."""
    return ModelList(data=[ModelCard(id=settings.chat_model)] if settings.chat_model else [])
