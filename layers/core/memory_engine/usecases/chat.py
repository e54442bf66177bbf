"""OpenAI-compatible chat completions with long-term memory by `userid`.

With a valid userid: the user's nearest facts go in a message of their own before the user's
latest message (`chat_prompt`: never into the operator's system prompt), the upstream model
answers, and the exchange is queued to be recorded (the worker stores the turn and merges the
facts). Without one: a pure pass-through that reads and writes nothing.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput, MemoryEngineError, UpstreamFailed
from memory_engine.models.chat import ChatCompletionRequest
from memory_engine.models.messages import MAX_JOB_TEXT_CHARS, ChatMemoryJob
from memory_engine.usecases import facts
from memory_engine.usecases.chat_memory import user_scope
from memory_engine.usecases.chat_prompt import latest_user_texts, memory_block, with_memory

log = logging.getLogger("memory_engine.chat")


@dataclass(frozen=True)
class ChatPlan:
    """What goes upstream, and what to record afterwards (nothing without a userid)."""

    body: dict[str, Any]
    userid: str | None = None
    said: list[str] = field(default_factory=list)


def plan(engine: Engine, tenant: str, request: ChatCompletionRequest) -> ChatPlan:
    body = request.upstream_body()
    if not body.get("model"):
        if not engine.limits.chat_model:
            raise InvalidInput(
                "model is required: name the model, or set MEMORY_ENGINE_CHAT_MODEL on the server.",
                [{"field": "model", "message": "is required"}],
            )
        body["model"] = engine.limits.chat_model
    userid = request.memory_user()
    if userid is None:
        return ChatPlan(body)
    said = latest_user_texts(request.messages)
    limit = engine.limits.chat_memory_limit
    scope = user_scope(userid)
    # Twice as many as shown: the block leaves out a fact that reads as orders (chat_prompt), and
    # the next nearest take its place.
    found = facts.nearest(engine, tenant, scope, said[-1], 2 * limit) if said and limit else []
    block = memory_block(
        [memory.content for memory, _ in found], engine.limits.chat_memory_max_chars, max_facts=limit
    )
    if block:
        body["messages"] = with_memory(request.messages, block)
    return ChatPlan(body, userid, said)


def complete(engine: Engine, tenant: str, request: ChatCompletionRequest) -> dict[str, Any]:
    """The upstream's chat completion, unchanged; the exchange is queued to be remembered."""
    chat = plan(engine, tenant, request)
    answer = engine.chat.complete(chat.body)
    record(engine, tenant, chat, _answer_text(answer))
    return answer


def stream(engine: Engine, tenant: str, request: ChatCompletionRequest) -> Iterator[bytes]:
    """Server-sent events in OpenAI's chunk format, relayed as they come. The upstream is called
    now, so its refusal is an HTTP error. A failure mid-stream (the upstream cut off, timed out or
    sent an error) ends the stream with an error event in OpenAI's shape and no `[DONE]`, and the
    cut answer is not remembered: only a stream the upstream completed ends in `[DONE]`."""
    chat = plan(engine, tenant, request)
    events = engine.chat.stream(chat.body)
    return _relay(engine, tenant, chat, events)


def _relay(engine: Engine, tenant: str, chat: ChatPlan, events: Iterator[str]) -> Iterator[bytes]:
    pieces: list[str] = []
    try:
        for payload in events:
            yield f"data: {payload}\n\n".encode()
            pieces.append(_delta_text(payload))
        yield b"data: [DONE]\n\n"
    except UpstreamFailed as error:
        failure = {"error": {"message": error.message, "type": "upstream_error", "param": None, "code": None}}
        yield f"data: {json.dumps(failure)}\n\n".encode()
        return
    finally:
        close = getattr(events, "close", None)
        if callable(close):
            close()
    # After [DONE]: the client has its whole answer before anything is queued.
    record(engine, tenant, chat, "".join(pieces))


def record(engine: Engine, tenant: str, chat: ChatPlan, answer: str) -> None:
    """Queue the exchange for the user's memory. A queue failure is logged, never turned into a
    failed answer: the model has answered, and the caller gets that answer."""
    if chat.userid is None or not chat.said:
        return
    job = ChatMemoryJob(
        tenant=tenant,
        userid=chat.userid,
        dialog_uuid=f"chat-{uuid.uuid4().hex}",
        user_messages=newest_within(chat.said, MAX_JOB_TEXT_CHARS),
        answer=answer[:MAX_JOB_TEXT_CHARS],
        language=facts.fact_language(engine.limits.fact_language, chat.said),
    )
    try:
        engine.queue.send(job)
    except MemoryEngineError as error:
        log.warning("chat exchange not queued for memory: %s", error.message, extra={"userid": chat.userid})


def newest_within(texts: list[str], max_chars: int) -> list[str]:
    """The newest texts that fit in `max_chars` together (the oldest one kept is cut to fit), so a
    job stays within the queue's message size."""
    kept: list[str] = []
    room = max_chars
    for text in reversed(texts):
        if room <= 0:
            break
        kept.append(text[-room:] if len(text) > room else text)
        room -= len(text)
    return list(reversed(kept))


def _answer_text(answer: dict[str, Any]) -> str:
    choices = answer.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def _delta_text(payload: str) -> str:
    try:
        chunk = json.loads(payload)
        content = chunk["choices"][0]["delta"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return ""  # usage chunks, keep-alives, anything that is not a content delta
    return content if isinstance(content, str) else ""
