"""The API dialects as calls: the scoped memory bank (`/v1/memories...`, docs/api.md §3), the chat
route and its forget-a-user (§4), and the game-NPC memory (§2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from memory_engine_client.call import Call, Plan, body, path_part, raw, reader
from memory_engine_client.models import (
    BankMemory,
    CreateMemoryRequest,
    DeleteMemoryResponse,
    Event,
    GameMemoryRequest,
    GameMemoryResponse,
    GenerateMemoriesRequest,
    GenerateMemoriesResponse,
    KeyFactView,
    ListKeyFactsResponse,
    ListRevisionsResponse,
    ModelList,
    PatchMemoryRequest,
    RecordedChat,
    RecordMemoryRequest,
    RecordMemoryResponse,
    RetrieveMemoriesRequest,
    RetrieveMemoriesResponse,
    UserMemoryDeleted,
)

Scope = Mapping[str, str]


def bank_create(
    fact: str, scope: Scope, *, ttl_seconds: int | None = None, expires_at: str | None = None
) -> Call[BankMemory]:
    """Store one fact under a scope (a flat dict of strings, matched exactly), as given; with
    `ttl_seconds` or `expires_at` (ISO 8601), it stops existing then."""
    sent = body(CreateMemoryRequest, fact=fact, scope=scope, ttl_seconds=ttl_seconds, expires_at=expires_at)
    return Call("POST", "/v1/memories", reader(BankMemory), sent)


def bank_get(name: str) -> Call[BankMemory]:
    """One memory by its name (`memories/<id>`) or id."""
    return Call("GET", _memory_path(name), reader(BankMemory))


def bank_correct(name: str, fact: str) -> Call[BankMemory]:
    """Correct a fact's wording (same name); the earlier wording stays as a revision."""
    return Call("PATCH", _memory_path(name), reader(BankMemory), body(PatchMemoryRequest, fact=fact))


def bank_retire(name: str) -> Call[BankMemory]:
    """Retire a fact: it leaves the scope's current facts but stays readable by name, with its history."""
    return Call("PATCH", _memory_path(name), reader(BankMemory), body(PatchMemoryRequest, retire=True))


def bank_revisions(name: str) -> Call[ListRevisionsResponse]:
    """Every wording a fact had, oldest first, with the event time each held."""
    return Call("GET", f"{_memory_path(name)}/revisions", reader(ListRevisionsResponse))


def key_facts(name: str) -> Call[ListKeyFactsResponse]:
    """An extracted memory's key facts, each with its wordings oldest first (the last as it reads now)."""
    return Call("GET", f"{_memory_path(name)}/keyFacts", reader(ListKeyFactsResponse))


def correct_key_fact(name: str, index: int, fact: str) -> Call[KeyFactView]:
    """Correct one key fact of an extracted memory; its earlier wording stays as history."""
    path = f"{_memory_path(name)}/keyFacts/{index}"
    return Call("PATCH", path, reader(KeyFactView), body(PatchMemoryRequest, fact=fact))


def retire_key_fact(name: str, index: int) -> Call[KeyFactView]:
    """Retire one key fact of an extracted memory: it no longer holds, and stays readable as history."""
    path = f"{_memory_path(name)}/keyFacts/{index}"
    return Call("PATCH", path, reader(KeyFactView), body(PatchMemoryRequest, retire=True))


def bank_delete(name: str) -> Call[DeleteMemoryResponse]:
    """Delete one memory by name or id: a fact, or an engine memory (its turns stay as history)."""
    return Call("DELETE", _memory_path(name), reader(DeleteMemoryResponse))


def bank_search(scope: Scope, query: str, *, top_k: int | None = None) -> Call[RetrieveMemoriesResponse]:
    """The scope's memories nearest to `query`, closest (smallest `distance`) first."""
    params = {"search_query": query, "top_k": top_k}
    return _retrieve(scope, similarity_search_params={k: v for k, v in params.items() if v is not None})


def bank_list(
    scope: Scope, *, page_size: int | None = None, page_token: str | None = None
) -> Call[RetrieveMemoriesResponse]:
    """One page of every memory in the scope; `next_page_token` is set while more remain."""
    params = {"page_size": page_size, "page_token": page_token}
    return _retrieve(scope, simple_retrieval_params={k: v for k, v in params.items() if v is not None})


def bank_list_all(scope: Scope, *, page_size: int = 1000) -> Plan[list[BankMemory]]:
    """Every memory in the scope, page after page."""
    found: list[BankMemory] = []
    token: str | None = None
    while True:
        page: RetrieveMemoriesResponse = yield bank_list(scope, page_size=page_size, page_token=token)
        found.extend(hit.memory for hit in page.retrieved_memories)
        token = page.next_page_token
        if not token:
            return found


def bank_generate(
    scope: Scope, events: Sequence[str | Event | Mapping[str, Any]], *, language: str | None = None
) -> Call[GenerateMemoriesResponse]:
    """Extract short facts from the events and merge them into the scope's facts; a plain string
    is an event said by the user."""
    listed = [
        {"content": {"role": "user", "parts": [{"text": event}]}}
        if isinstance(event, str)
        else event.model_dump(mode="json", exclude_unset=True)
        if isinstance(event, BaseModel)
        else dict(event)
        for event in events
    ]
    return Call(
        "POST",
        "/v1/memories/generate",
        reader(GenerateMemoriesResponse),
        body(
            GenerateMemoriesRequest, scope=scope, direct_contents_source={"events": listed}, language=language
        ),
    )


def forget_user(userid: str) -> Call[UserMemoryDeleted]:
    """Delete everything remembered about a chat user (the `userid` of chat completions)."""
    return Call("DELETE", f"/v1/users/{path_part(userid, 'userid')}/memory", reader(UserMemoryDeleted))


def chat_completion(request: Mapping[str, Any]) -> Call[dict[str, Any]]:
    """An OpenAI Chat Completions request (plus `userid` for long-term memory), answered as
    OpenAI's JSON. Not streamed: for streaming, use any OpenAI client with the engine's URL."""
    if request.get("stream"):
        raise ValueError("chat_completion does not stream: use an OpenAI client for stream=True")
    return Call("POST", "/v1/chat/completions", raw, dict(request))


def list_models() -> Call[ModelList]:
    """OpenAI's model list: the chat route's default model (for OpenAI-style front-ends)."""
    return Call("GET", "/v1/models", reader(ModelList))


def game_memory(
    session_id: str, *, npc_id: str | None = None, page_size: int | None = None, page_token: str | None = None
) -> Call[GameMemoryResponse]:
    """A session's raw history, oldest first, with per-npc counters (the game envelope)."""
    return Call(
        "POST",
        "/open/game/memory",
        reader(GameMemoryResponse),
        body(
            GameMemoryRequest,
            session_id=session_id,
            npc_id=npc_id,
            page_size=page_size,
            page_token=page_token,
        ),
    )


def game_record(
    session_id: str, chats: Sequence[RecordedChat | Mapping[str, Any]]
) -> Call[RecordMemoryResponse]:
    """NPC chats (`{"npc_id", "message", "reply"}`) into an existing session, as Type 1 turns."""
    listed = [
        chat.model_dump(mode="json", exclude_unset=True) if isinstance(chat, BaseModel) else dict(chat)
        for chat in chats
    ]
    return Call(
        "POST",
        "/open/game/recordmemory",
        reader(RecordMemoryResponse),
        body(RecordMemoryRequest, session_id=session_id, chats=listed),
    )


def _retrieve(scope: Scope, **params: Any) -> Call[RetrieveMemoriesResponse]:
    # The slash spelling: API Gateway cannot route `/v1/memories:retrieve`; both serve the same.
    return Call(
        "POST",
        "/v1/memories/retrieve",
        reader(RetrieveMemoriesResponse),
        body(RetrieveMemoriesRequest, scope=dict(scope), **params),
    )


def _memory_path(name: str) -> str:
    memory_id = name.removeprefix("memories/")
    if not memory_id or "/" in memory_id:
        raise ValueError(f"not a memory name or id: {name!r} (expected memories/<id> or <id>)")
    return f"/v1/memories/{path_part(memory_id, 'name')}"
