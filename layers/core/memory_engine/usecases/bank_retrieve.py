"""Retrieve a scope's memories: the nearest to a query, or all of them page by page."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput
from memory_engine.models.bank import (
    BankMemory,
    RetrievedBankMemory,
    RetrieveMemoriesRequest,
    RetrieveMemoriesResponse,
    SimpleRetrievalParams,
)
from memory_engine.models.domain import scope_key
from memory_engine.usecases import facts


def run(engine: Engine, tenant: str, request: RetrieveMemoriesRequest) -> RetrieveMemoriesResponse:
    """Similarity search when `similarity_search_params` is given (closest first, with the
    Euclidean `distance`), else simple retrieval. A scope with no memory gives an empty list."""
    search = request.similarity_search_params
    if search is not None:
        pairs = facts.nearest(engine, tenant, request.scope, search.search_query, search.top_k)
        hits = [RetrievedBankMemory(memory=BankMemory.of(memory), distance=gap) for memory, gap in pairs]
        return RetrieveMemoriesResponse(retrieved_memories=hits)
    return _page(engine, tenant, request, request.simple_retrieval_params or SimpleRetrievalParams())


def _page(
    engine: Engine, tenant: str, request: RetrieveMemoriesRequest, params: SimpleRetrievalParams
) -> RetrieveMemoriesResponse:
    thread = scope_key(request.scope)
    after = decode_page_token(params.page_token, thread) if params.page_token else None
    # One more than the page: whether another page follows, without a second query.
    page = engine.store.list_thread_memories(tenant, thread, after, params.page_size + 1)
    more = len(page) > params.page_size
    page = page[: params.page_size]
    return RetrieveMemoriesResponse(
        retrieved_memories=[
            RetrievedBankMemory(memory=BankMemory.of(memory))
            for memory in page
            if memory.visible_scope == request.scope
        ],
        next_page_token=encode_page_token(page[-1].memory_id, thread) if more else None,
    )


def _scope_tag(thread: str) -> str:
    return hashlib.sha256(thread.encode("utf-8")).hexdigest()[:12]


def encode_page_token(after: str, thread: str) -> str:
    """Opaque to callers: the last memory id of the page, tied to its scope."""
    raw = json.dumps({"after": after, "scope": _scope_tag(thread)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def decode_page_token(token: str, thread: str) -> str:
    problem = [{"field": "simple_retrieval_params.page_token", "message": "not a token from this scope"}]
    unknown = "page_token is not one this API gave: send the next_page_token as is."
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError) as error:
        raise InvalidInput(unknown, problem) from error
    if not isinstance(decoded, dict) or not isinstance(decoded.get("after"), str):
        raise InvalidInput(unknown, problem)
    if decoded.get("scope") != _scope_tag(thread):
        raise InvalidInput("page_token belongs to another scope: send it with its own scope.", problem)
    return str(decoded["after"])
