"""The OpenAI Chat Completions request, as far as the memory layer needs to read it (docs/api.md §4).

Everything else in the body (tools, temperature, response_format, ...) is kept as sent and
passed to the upstream model untouched; only `userid`, our one extra field, is taken out.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory_engine.models.strict import StrictTypes

MAX_MESSAGES = 2_000


def memory_userid(value: Any) -> str | None:
    """The user whose memory a request uses: a UUID version 4 in its canonical 36-character form
    (any letter case), normalised to lower case. None, and so no memory at all, for anything else."""
    if not isinstance(value, str) or len(value) != 36:
        return None
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return None
    if parsed.version != 4 or parsed.variant != uuid.RFC_4122 or str(parsed) != value.lower():
        return None
    return str(parsed)


class ChatCompletionRequest(StrictTypes):
    # Unknown fields go upstream as sent; the ones read here are strict (models.strict).
    model_config = ConfigDict(extra="allow")

    model: str | None = Field(None, min_length=1, max_length=256)
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool | None = False  # null is what some clients send for "not streamed"
    # Any JSON: only a UUID v4 string turns memory on; anything else is a plain pass-through.
    userid: Any = None

    @field_validator("messages")
    @classmethod
    def _have_roles(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for message in messages:
            if not isinstance(message.get("role"), str):
                raise ValueError('every message needs a "role" (system, user, assistant, ...)')
        return messages

    def upstream_body(self) -> dict[str, Any]:
        """The request as the client sent it, without `userid`."""
        return self.model_dump(mode="json", exclude_unset=True, exclude={"userid"})


class UserMemoryDeleted(BaseModel):
    object: str = "user.memory.deleted"
    userid: str
    deleted: bool = True
    deleted_memories: int
    deleted_dialogs: int


def message_text(message: dict[str, Any]) -> str:
    """A message's text: its string content, or its text parts joined (images and audio skipped)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part for part in content if isinstance(part, dict) and part.get("type") == "text"]
        return "\n".join(part["text"] for part in parts if isinstance(part.get("text"), str))
    return ""
