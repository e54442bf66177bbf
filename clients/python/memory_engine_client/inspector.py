"""The memory inspector's routes (`/v1/inspect/...`, docs/inspector.md) as calls: read-only views
of what a key holds, a delete preview, and a forced extraction."""

from __future__ import annotations

from memory_engine_client.call import Call, body, reader
from memory_engine_client.models import (
    DeletePreview,
    ExtractRequest,
    ExtractResponse,
    MemoriesResponse,
    QueueResponse,
    SessionResponse,
    ThreadsResponse,
)


def list_threads(
    *, after: str | None = None, scopes_after: str | None = None, limit: int | None = None
) -> Call[ThreadsResponse]:
    """A page of the key's sessions by thread and a page of the memory-bank scopes that hold
    facts; pass `next_after` as `after` (or `next_scopes_after` as `scopes_after`) for the next
    page of that list alone."""
    params: dict[str, str | int] = {}
    if after is not None:
        params["after"] = after
    if scopes_after is not None:
        params["scopes_after"] = scopes_after
    if limit is not None:
        params["limit"] = limit
    return Call("GET", "/v1/inspect/threads", reader(ThreadsResponse), params=params)


def show_session(session_uuid: str) -> Call[SessionResponse]:
    """One session: its turns in order with their state, and the memories made of them."""
    return Call("GET", "/v1/inspect/session", reader(SessionResponse), params={"session_uuid": session_uuid})


def list_memories(
    thread: str, *, after: str | None = None, limit: int | None = None
) -> Call[MemoriesResponse]:
    """A page of a thread's memories, every field (a scope's thread, from list_threads: its
    facts); pass `next_after` as `after` for the next page."""
    params: dict[str, str | int] = {"thread": thread}
    if after is not None:
        params["after"] = after
    if limit is not None:
        params["limit"] = limit
    return Call("GET", "/v1/inspect/memories", reader(MemoriesResponse), params=params)


def show_queue() -> Call[QueueResponse]:
    """Waiting and dead extraction jobs (the waiting ones are not listable on SQS)."""
    return Call("GET", "/v1/inspect/queue", reader(QueueResponse))


def preview_delete(session_uuid: str, dialog_uuid: str) -> Call[DeletePreview]:
    """What deleting this dialog or memory would remove and re-buffer, without doing it."""
    params = {"session_uuid": session_uuid, "dialog_uuid": dialog_uuid}
    return Call("GET", "/v1/inspect/delete-preview", reader(DeletePreview), params=params)


def force_extract(session_uuid: str) -> Call[ExtractResponse]:
    """Queue extraction of everything the session has buffered now."""
    return Call(
        "POST",
        "/v1/inspect/extract",
        reader(ExtractResponse),
        body(ExtractRequest, session_uuid=session_uuid),
    )
