"""The OpenAI Chat Completions request, as far as the memory layer needs to read it (docs/api.md §4).

Everything else in the body (tools, temperature, response_format, ...) is kept as sent and
passed to the upstream model untouched; only `userid`, our one extra field, is taken out.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from memory_engine.models.base import Model
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


# OpenAI's `user` (an end-user id of the caller's own form) names a memory user through a UUID
# derived from it, so the same string always reaches the same memory, and forgetting by it works.
OPENAI_USER_NAMESPACE = uuid.UUID("5d0a9a55-0c64-4a9e-8e1f-6a3c2b7d9e10")


def chat_user_id(user: str) -> str:
    """The memory user of OpenAI's `user` field: a UUID v4 as it is, any other string through a
    UUID (version 5) derived from it."""
    return memory_userid(user) or str(uuid.uuid5(OPENAI_USER_NAMESPACE, user))


def looks_like_uuid(value: str) -> bool:
    """A UUID's shape (any version): meant as one, so not an end-user id of another form."""
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return len(value) == 36


class ChatCompletionRequest(StrictTypes):
    # Unknown fields go upstream as sent; the ones read here are strict (models.strict).
    model_config = ConfigDict(extra="allow")

    model: str | None = Field(None, min_length=1, max_length=256)
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool | None = False  # null is what some clients send for "not streamed"
    # Ours: a UUID v4, or absent/null for no memory (a userid the service cannot use is a 422,
    # never a silent pass-through: the caller meant memory).
    userid: str | None = None
    # OpenAI's end-user id: the memory user when `userid` is absent (sent upstream as given).
    user: Any = None

    @field_validator("userid")
    @classmethod
    def _a_uuid4(cls, userid: str | None) -> str | None:
        if userid is None:
            return None
        normal = memory_userid(userid)
        if normal is None:
            raise ValueError(
                "must be a UUID v4 such as 7f3c2a9e-4b1d-4c8e-9a6f-2d5e8b1c0f47 (leave userid out, or "
                "null, for a plain pass-through with no memory; OpenAI's `user` takes any string)"
            )
        return normal

    def memory_user(self) -> str | None:
        """Whose memory this request uses: `userid`, else OpenAI's `user` (any non-blank string),
        else nobody's (a pass-through)."""
        if self.userid is not None:
            return self.userid
        if isinstance(self.user, str) and self.user.strip():
            return chat_user_id(self.user)
        return None

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


class UserMemoryDeleted(Model):
    object: str = "user.memory.deleted"
    userid: str
    deleted: bool = True
    deleted_memories: int
    deleted_dialogs: int


class ModelCard(Model):
    """One model in OpenAI's model list."""

    id: str
    object: str = "model"
    created: int = 0
    owned_by: str = "memory-engine"


class ModelList(Model):
    """`GET /v1/models` in OpenAI's shape, so OpenAI-style front-ends can connect and pick a model."""

    object: str = "list"
    data: list[ModelCard]


def message_text(message: dict[str, Any]) -> str:
    """A message's text: its string content, or its text parts joined (images and audio skipped)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part for part in content if isinstance(part, dict) and part.get("type") == "text"]
        return "\n".join(part["text"] for part in parts if isinstance(part.get("text"), str))
    return ""
