"""Adapter for any OpenAI-compatible endpoint. Importing it does not import `openai`."""

from memory_engine.adapters.openai.errors import LlmBadOutput, LlmUnavailable, LlmUnsupported
from memory_engine.adapters.openai.llm_extractor import LlmExtractor, chat_client

__all__ = ["LlmBadOutput", "LlmExtractor", "LlmUnavailable", "LlmUnsupported", "chat_client"]
