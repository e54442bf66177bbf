"""The MCP tools' answers as text a model reads: one line per memory or turn, its id first, so a
later `get_memory` or `forget` can name it."""

from __future__ import annotations

import math

from memory_engine_client.models import (
    BankMemory,
    ConsolidateResponse,
    DeleteResult,
    MemoriesResponse,
    QueueResponse,
    RetrievedBankMemory,
    RetrieveMemoriesResponse,
    RetrieveResponse,
    SessionResponse,
    TurnView,
)

SNIPPET = 300


def estimate_tokens(text: str) -> int:
    """About a token per 4 bytes of UTF-8: a word of English, two or three Hangul syllables (the
    API's own count is used wherever it gives one)."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def snippet(text: str, size: int = SNIPPET) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[:size].rstrip() + "…"


def remembered(dialog: str, session: str, thread: str, outcome: ConsolidateResponse) -> str:
    state = (
        "extraction is queued now"
        if outcome.extraction_queued
        else f"{outcome.buffered} turns wait for extraction (it runs at 20, or now with extract_now)"
    )
    return (
        f"Remembered the turn {dialog} in session {session} of thread {thread}; {state}. "
        "Until it runs, recall finds the turn itself."
    )


def hits(query: str, answer: RetrieveResponse) -> str:
    if not answer.data:
        return f"Nothing remembered about: {query}"
    tokens = f" ({answer.tokens} tokens)" if answer.tokens is not None else ""
    lines = [f"Memories for: {query}{tokens}"]
    for n, hit in enumerate(answer.data, 1):
        what = "memory" if hit.kind == "memory" else "recent turn"
        label = f"{what} {hit.memory_id} | session {hit.session_uuid} | score {hit.score:.3f}"
        lines.append(f"{n}. [{label}] {hit.content}")
    return "\n".join(lines)


def facts(query: str, found: list[RetrievedBankMemory], max_tokens: int) -> str:
    """The nearest facts, best first, as many as fit in `max_tokens`."""
    if not found:
        return f"No fact matches: {query}"
    lines = [f"Facts for: {query}"]
    used = estimate_tokens(lines[0])
    for n, hit in enumerate(found, 1):
        distance = f" | distance {hit.distance:.3f}" if hit.distance is not None else ""
        line = f"{n}. [{hit.memory.name}{distance}] {hit.memory.fact}"
        used += estimate_tokens(line)
        if used > max_tokens and n > 1:
            lines.append(f"({len(found) - n + 1} more left out: over max_tokens={max_tokens})")
            break
        lines.append(line)
    return "\n".join(lines)


def fact_list(target: str, page: RetrieveMemoriesResponse) -> str:
    if not page.retrieved_memories:
        return f"No facts kept for {target}."
    lines = [f"Facts kept for {target}:"]
    lines += [f"- {hit.memory.name} | {snippet(hit.memory.fact)}" for hit in page.retrieved_memories]
    if page.next_page_token:
        lines.append("(more facts than listed: raise limit)")
    return "\n".join(lines)


def memories(target: str, kept: MemoriesResponse, session: SessionResponse | None, limit: int) -> str:
    """The thread's memories and the session's turns not yet extracted: what recall searches."""
    waiting = [turn for turn in session.turns if turn.status == "buffered"] if session else []
    if not kept.memories and not waiting:
        return f"Nothing kept for {target} yet."
    lines = [f"Kept for {target}:"]
    if kept.memories:
        lines.append("Memories:")
        lines += [
            f"- {memory.memory_id} | session {memory.session_uuid} | {snippet(memory.fields.summary)}"
            for memory in kept.memories
        ]
        if kept.next_after:
            lines.append(f"(more memories than {limit}: raise limit)")
    if waiting:
        lines.append("Turns not yet extracted (recall finds them too):")
        lines += [f"- {turn.dialog_uuid} | {snippet(turn.query)}" for turn in waiting[-limit:]]
    return "\n".join(lines)


def one_memory(memory: BankMemory) -> str:
    return f"{memory.name} (created {memory.createTime}, updated {memory.updateTime})\n{memory.fact}"


def one_turn(turn: TurnView) -> str:
    reply = f"\nReply: {turn.answer}" if turn.answer else ""
    extracted = f", in memory {turn.memory_id}" if turn.memory_id else ""
    when = f"{turn.timestamp:%Y-%m-%d %H:%M} UTC"
    said = f"{turn.user_name}: {turn.query}{reply}"
    return f"Turn {turn.dialog_uuid} ({turn.status}{extracted}; {when})\n{said}"


def deleted(result: DeleteResult) -> str:
    parts = [
        f"deleted dialogs: {', '.join(result.deleted_dialogs) or 'none'}",
        f"deleted memories: {', '.join(result.deleted_memories) or 'none'}",
    ]
    if result.rebuffered_dialogs:
        parts.append(f"kept and to be extracted again: {', '.join(result.rebuffered_dialogs)}")
    return "Forgot it; " + "; ".join(parts) + "."


def status(session: str, thread: str, shown: SessionResponse | None, queue: QueueResponse) -> str:
    if shown is None:
        return f"Nothing remembered in session {session} of thread {thread} yet."
    counts = shown.counts
    line = (
        f"Session {session} of thread {thread}: {counts.buffered} turns wait for extraction, "
        f"{counts.extracted} were extracted into {len(shown.memories)} memories."
    )
    if queue.pending is None:
        return line + " Queued jobs cannot be listed on this deployment (SQS)."
    jobs = [job for job in queue.pending if getattr(job, "session_uuid", None) == session]
    state = f"{len(jobs)} extraction job(s) queued for it" if jobs else "no extraction queued for it"
    return f"{line} {state.capitalize()}."
