"""The chat upstream port: the OpenAI-compatible model behind /v1/chat/completions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol


class ChatUpstream(Protocol):
    """An OpenAI-compatible chat-completions endpoint, spoken to in its own JSON.

    Errors: `UpstreamRejected` (the endpoint answered 4xx: told in the engine's words, never its
    own body) and `UpstreamFailed` (unreachable, timed out, or 5xx).
    """

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat completion for a request body (`stream` false)."""
        ...

    def stream(self, body: dict[str, Any]) -> Iterator[str]:
        """The `data:` payloads of a streamed completion (`stream` true), in order, without the
        final `[DONE]`. Connects before returning, so refusals raise here, not while iterating."""
        ...
