"""Whose memory an MCP server keeps: bound once, at start, so the model never names a thread.

A desktop client starts one server per user (mem0's OpenMemory binds the user through the
connection, Graphiti through `--group-id`); the tools then act on that user's thread (turns,
extracted into memories) or, with a scope, on that scope's facts.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

THREAD_VARIABLE = "MEMORY_ENGINE_MCP_THREAD"
SESSION_VARIABLE = "MEMORY_ENGINE_MCP_SESSION"
SCOPE_VARIABLE = "MEMORY_ENGINE_MCP_SCOPE"
USER_NAME_VARIABLE = "MEMORY_ENGINE_MCP_USER_NAME"
LANGUAGE_VARIABLE = "MEMORY_ENGINE_MCP_LANGUAGE"
DEFAULT_THREAD = "mcp"
HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
# The speaker a turn is labelled with when no user name is bound: the engine's own default ("당신")
# is Korean, wrong on an English line.
DEFAULT_SPEAKERS = {"ko": None, "en": "User"}


@dataclass(frozen=True)
class Identity:
    """The bound thread (and the session its turns go to), or a scope for facts; the user's name
    and language for the turns. With a scope, remember stores facts under it instead of turns."""

    thread: str = DEFAULT_THREAD
    session: str | None = None
    scope: Mapping[str, str] | None = None
    user_name: str | None = None
    language: str | None = None

    @property
    def session_uuid(self) -> str:
        return self.session or self.thread

    def describe(self) -> str:
        if self.scope is not None:
            return f"the scope {json.dumps(dict(self.scope), ensure_ascii=False, sort_keys=True)}"
        return f"the thread {self.thread!r}"

    def language_of(self, text: str) -> str:
        """The bound language, else Korean for a line with Hangul and English otherwise."""
        return self.language or ("ko" if HANGUL.search(text) else "en")

    def speaker_for(self, language: str) -> str | None:
        """The bound name, else a default in the turn's language (None: the engine's own)."""
        return self.user_name or DEFAULT_SPEAKERS.get(language, "User")


def parse_scope(text: str) -> dict[str, str]:
    """A scope as JSON (`{"user_id": "42"}`) or as `key=value` pairs joined by commas."""
    text = text.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as error:
            raise ValueError(f"--scope: not JSON ({error})") from None
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise ValueError('--scope: a flat object of strings, e.g. {"user_id": "42"}')
        return value
    pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
    if not pairs or any(len(pair) != 2 or not pair[0].strip() or not pair[1].strip() for pair in pairs):
        raise ValueError("--scope: key=value pairs joined by commas (user_id=42), or a JSON object")
    return {key.strip(): value.strip() for key, value in pairs}


def identity_from(
    thread: str | None = None,
    session: str | None = None,
    scope: str | None = None,
    user_name: str | None = None,
    language: str | None = None,
    environ: Mapping[str, str] = os.environ,
) -> Identity:
    """Arguments first, then MEMORY_ENGINE_MCP_THREAD / _SESSION / _SCOPE / _USER_NAME / _LANGUAGE."""
    bound_scope = scope or environ.get(SCOPE_VARIABLE) or None
    return Identity(
        thread=thread or environ.get(THREAD_VARIABLE) or DEFAULT_THREAD,
        session=session or environ.get(SESSION_VARIABLE) or None,
        scope=parse_scope(bound_scope) if bound_scope else None,
        user_name=user_name or environ.get(USER_NAME_VARIABLE) or None,
        language=language or environ.get(LANGUAGE_VARIABLE) or None,
    )
