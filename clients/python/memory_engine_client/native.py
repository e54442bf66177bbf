"""The native engine API (`/v1/engine/...`, docs/api.md §1) as calls, with the API's own models."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from memory_engine_client.call import Call, Plan, body, reader
from memory_engine_client.models import (
    ConsolidateRequest,
    ConsolidateResponse,
    DeleteRequest,
    DeleteResponse,
    EmbedRequest,
    EmbedResponse,
    ForkRequest,
    ForkResponse,
    HealthResponse,
    NewDialog,
    RetrieveRequest,
    RetrieveResponse,
)

Dialog = NewDialog | Mapping[str, Any]


def health() -> Call[HealthResponse]:
    """Liveness; the one route that needs no key."""
    return Call("GET", "/v1/engine/health/", reader(HealthResponse), auth=False)


def consolidate(
    session_uuid: str,
    parent_session_uuid: str,
    new_dialog: Dialog,
    *,
    user_name: str | None = None,
    language: str | None = None,
    force_summary: bool | None = None,
    length_limit: int | None = None,
    memory_ttl_seconds: int | None = None,
) -> Call[ConsolidateResponse]:
    """Append one turn (`{"uuid", "query", "answer", ...}`) to a session's buffer; the session is
    created by its first turn and its memories are searched under `parent_session_uuid` (the
    thread). `force_summary` queues extraction of everything buffered now; the memories made of
    a turn sent with `memory_ttl_seconds` expire that long after their extraction."""
    options = {
        "force_summary": force_summary,
        "length_limit": length_limit,
        "memory_ttl_seconds": memory_ttl_seconds,
    }
    return Call(
        "POST",
        "/v1/engine/consolidate/",
        reader(ConsolidateResponse),
        body(
            ConsolidateRequest,
            session_uuid=session_uuid,
            parent_session_uuid=parent_session_uuid,
            new_dialog=_dialog(new_dialog),
            user_name=user_name,
            language=language,
            options={key: value for key, value in options.items() if value is not None} or None,
        ),
    )


def consolidate_conversation(
    session_uuid: str,
    parent_session_uuid: str,
    dialogs: Iterable[Dialog],
    *,
    user_name: str | None = None,
    language: str | None = None,
    extract_at_end: bool = False,
) -> Plan[int]:
    """Send a conversation's turns one by one, in order (the buffer keeps the order they arrive
    in); with `extract_at_end`, the last turn queues extraction of whatever is buffered. Every
    turn is checked before the first is sent. Returns how many turns were sent."""
    turns = [_dialog(dialog) for dialog in dialogs]
    calls = [
        consolidate(
            session_uuid,
            parent_session_uuid,
            turn,
            user_name=user_name,
            language=language,
            force_summary=True if extract_at_end and n == len(turns) - 1 else None,
        )
        for n, turn in enumerate(turns)
    ]
    # Not `yield from calls`: the runner sends each call's result back, which a list iterator refuses.
    for call in calls:  # noqa: UP028
        yield call
    return len(calls)


def retrieve(
    parent_session_uuids: str | Sequence[str],
    query: str,
    *,
    limit: int | None = None,
    max_tokens: int | None = None,
    explain: bool | None = None,
    last_dialog_uuid: str | None = None,
    recent_dialogs: Sequence[str | Mapping[str, Any]] | None = None,
) -> Call[RetrieveResponse]:
    """The memories (and still-buffered turns) of these threads that matter for `query`, best
    first, each with its matched turns as `evidence`; `max_tokens` packs the answer into that
    many tokens of `content`."""
    threads = [parent_session_uuids] if isinstance(parent_session_uuids, str) else list(parent_session_uuids)
    options = {"limit": limit, "max_tokens": max_tokens, "explain": explain}
    return Call(
        "POST",
        "/v1/engine/retrieve/",
        reader(RetrieveResponse),
        body(
            RetrieveRequest,
            parent_session_uuids=threads,
            user_input={"query": query},
            last_dialog_uuid=last_dialog_uuid,
            recent_dialogs=list(recent_dialogs) if recent_dialogs is not None else None,
            options={key: value for key, value in options.items() if value is not None} or None,
        ),
    )


def delete(session_uuid: str, dialog_uuid: str) -> Call[DeleteResponse]:
    """Delete a memory (by memory id) or a dialog; an extracted dialog takes its memories with it
    and their other turns go back to the buffer."""
    return Call(
        "DELETE",
        "/v1/engine/delete/",
        reader(DeleteResponse),
        body(DeleteRequest, session_uuid=session_uuid, dialog_uuid=dialog_uuid),
    )


def fork(
    source_session_uuid: str,
    target_session_uuid: str,
    cutoff_dialog_uuid: str,
    *,
    target_parent_session_uuid: str | None = None,
) -> Call[ForkResponse]:
    """Clone a session up to and including the cutoff dialog into a new session."""
    return Call(
        "POST",
        "/v1/engine/fork-delete/",
        reader(ForkResponse),
        body(
            ForkRequest,
            source_session_uuid=source_session_uuid,
            target_session_uuid=target_session_uuid,
            cutoff_dialog_uuid=cutoff_dialog_uuid,
            target_parent_session_uuid=target_parent_session_uuid,
        ),
    )


class Embedded(EmbedResponse):
    """The embed answer with its vectors typed (the API's model leaves them as extra fields)."""

    embedding: list[float] | None = None  # for one text
    embeddings: list[list[float]] | None = None  # for a list of texts


def embed(text: str | Sequence[str], *, mode: str | None = None) -> Call[Embedded]:
    """The engine's embedding of a text (`embedding`) or of a list of texts (`embeddings`)."""
    texts = text if isinstance(text, str) else list(text)
    return Call("POST", "/v1/engine/embed/", reader(Embedded), body(EmbedRequest, text=texts, mode=mode))


def _dialog(dialog: Dialog | BaseModel) -> dict[str, Any]:
    # Any model of a dialog (this client's, or the server's own in a test) as the JSON it stands for.
    if isinstance(dialog, BaseModel):
        return dialog.model_dump(mode="json", exclude_unset=True)
    return dict(dialog)
