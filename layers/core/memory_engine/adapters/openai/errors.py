"""Errors of the LLM adapter. They are `Unavailable`: the batch failed, nothing was written, and the
queue retries it (finally parking it in the dead-letter queue)."""

from __future__ import annotations

from memory_engine.errors import Unavailable


class LlmUnavailable(Unavailable):
    """The endpoint could not be used: down, rate limited past our retries, or it refused the
    request (bad key, unknown model)."""


class LlmBadOutput(Unavailable):
    """The model kept answering with output that does not fit the schema, even after repair and retry."""
