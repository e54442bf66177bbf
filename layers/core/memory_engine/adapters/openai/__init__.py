"""Adapter for any OpenAI-compatible endpoint. Importing it does not import `openai`."""

from memory_engine.adapters.openai.errors import LlmBadOutput, LlmUnavailable
from memory_engine.adapters.openai.llm_extractor import LlmExtractor, chat_client

__all__ = ["LlmBadOutput", "LlmExtractor", "LlmUnavailable", "chat_client"]
