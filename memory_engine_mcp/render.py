"""The MCP tools' answers as text a model reads: one line per memory, its id and score first, so a
later `forget` can name it."""

from __future__ import annotations

import json

from memory_engine.models.api import DeleteResult, RetrieveResponse
from memory_engine.models.bank import RetrievedBankMemory
from memory_engine.models.inspect import MemoriesResponse, ThreadsResponse

SNIPPET = 300


def scope(value: dict[str, str]) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def hits(query: str, answer: RetrieveResponse) -> str:
    if not answer.data:
        return f"Nothing remembered about: {query}"
    lines = [f"Memories for: {query}" + (f" ({answer.tokens} tokens)" if answer.tokens is not None else "")]
    for n, hit in enumerate(answer.data, 1):
        what = "memory" if hit.kind == "memory" else "recent turn"
        label = f"{what} {hit.memory_id} | session {hit.session_uuid} | score {hit.score:.3f}"
        lines.append(f"{n}. [{label}] {hit.content}")
    return "\n".join(lines)


def facts(query: str, found: list[RetrievedBankMemory]) -> str:
    if not found:
        return f"No fact under this scope matches: {query}"
    lines = [f"Facts for: {query}"]
    for n, hit in enumerate(found, 1):
        distance = f" | distance {hit.distance:.3f}" if hit.distance is not None else ""
        lines.append(f"{n}. [{hit.memory.name}{distance}] {hit.memory.fact}")
    return "\n".join(lines)


def deleted(result: DeleteResult) -> str:
    parts = [
        f"deleted dialogs: {', '.join(result.deleted_dialogs) or 'none'}",
        f"deleted memories: {', '.join(result.deleted_memories) or 'none'}",
    ]
    if result.rebuffered_dialogs:
        parts.append(f"kept and to be extracted again: {', '.join(result.rebuffered_dialogs)}")
    return "Forgot it; " + "; ".join(parts) + "."


def threads(answer: ThreadsResponse) -> str:
    lines = [f"{len(answer.threads)} threads, {len(answer.scopes)} scopes with facts."]
    for thread in answer.threads:
        sessions = ", ".join(session.session_uuid for session in thread.sessions)
        lines.append(f"- thread {thread.thread}: sessions {sessions}")
    for held in answer.scopes:
        lines.append(f"- scope {scope(held.scope)}: {held.facts} facts (list_memories thread: {held.thread})")
    return "\n".join(lines)


def memories(thread: str, answer: MemoriesResponse) -> str:
    if not answer.memories:
        return f"No memories in {thread}."
    lines = [f"Memories of {thread}:"]
    for memory in answer.memories:
        summary = memory.fields.summary
        if len(summary) > SNIPPET:
            summary = summary[:SNIPPET].rstrip() + "…"
        lines.append(f"- {memory.memory_id} | session {memory.session_uuid} | {summary}")
    if answer.next_after:
        lines.append(f"(more: after={answer.next_after})")
    return "\n".join(lines)
