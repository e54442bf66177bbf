"""Errors of the LLM adapter. They are `Unavailable`: the batch failed, nothing was written, and the
queue retries it (finally parking it in the dead-letter queue).

Each carries `spent`: what the failed call cost (requests, prompt and completion tokens), so the
tokens of failed attempts are counted too (the worker logs them with the failure)."""

from __future__ import annotations

from memory_engine.errors import Unavailable


class LlmError(Unavailable):
    # Class defaults; the chat client sets an instance's own when it raises.
    spent: dict[str, int] = {}  # noqa: RUF012 - never mutated, replaced per instance
    final = False


class LlmUnavailable(LlmError):
    """The endpoint could not be used: down, rate limited past our retries, or it refused the
    request (bad key, unknown model)."""


class LlmBadOutput(LlmError):
    """The model kept answering with output that does not fit the schema, even after repair and retry.

    `final`: running the job again later asks the same model the same question, so the worker
    parks it at once (the sweep queues the session again later) instead of paying for more answers."""

    final = True


class LlmUnsupported(LlmUnavailable):
    """The endpoint refused every structured-output mode: a configuration problem, so the worker
    parks the job at once (its error says what the server answered to each mode)."""

    final = True
