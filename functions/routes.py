"""The route table as data: read by the local server and by the CDK app alike.

A route added here is served locally and gets its own Lambda and API Gateway method, with the
permissions its `needs` name (infra/access.py turns them into IAM statements; a route without
needs fails the synth).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Need(StrEnum):
    """What a function may touch on AWS; nothing beyond its needs is granted."""

    TABLE_READ = "table:read"  # GetItem, Query, BatchGetItem on the table and its indexes
    TABLE_WRITE = "table:write"  # Put/Update/Delete/BatchWrite, ConditionCheck
    KEYS_READ = "keys:read"  # GetItem only: the authorizer's hashed-key lookup
    QUEUE_SEND = "queue:send"  # SendMessage to the extraction queue
    INDEX_READ = "index:read"  # search the index
    INDEX_WRITE = "index:write"  # index and delete documents
    INDEX_ADMIN = "index:admin"  # create the index and its mapping (deploy time)
    EMBED = "embed"  # invoke the embedding function or endpoint
    EXTRACT = "extract"  # the LLM configuration (model, endpoint) and reading its key's secret


READ, WRITE, SEND = Need.TABLE_READ, Need.TABLE_WRITE, Need.QUEUE_SEND
SEARCH, INDEX, EMBED, EXTRACT = Need.INDEX_READ, Need.INDEX_WRITE, Need.EMBED, Need.EXTRACT
# What building the whole engine takes (the extraction worker's needs).
ENGINE_NEEDS = frozenset({READ, WRITE, SEND, SEARCH, INDEX, EMBED, EXTRACT})


def needs(*wanted: Need) -> frozenset[Need]:
    return frozenset(wanted)


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    function: str  # folder under functions/ holding handler.py
    auth: bool = True
    # False for a path API Gateway REST cannot hold (a ':' in a path part): served by the local
    # server only; on AWS the same function answers its other spelling (`/v1/memories/retrieve`).
    rest_api: bool = True
    # What the function may touch on AWS (least privilege). Required: None fails the synth, so a
    # new route never silently gets more than it asked for. Routes of one function agree.
    needs: frozenset[Need] | None = None


# Scoped memory bank: facts are embedded and indexed as they are written.
BANK_RETRIEVE = needs(READ, SEARCH, EMBED)
# A delete from an eventually consistent index queues its second pass (usecases/index_purge.py).
BANK_GENERATE = needs(READ, WRITE, SEARCH, INDEX, EMBED, EXTRACT, SEND)
# A correction re-embeds what it changed and writes its documents again (a key fact: the memory's).
BANK_PATCH = needs(READ, WRITE, INDEX, EMBED)
# Chat: reads the user's memories, calls the upstream model (its key is the extractor's
# configuration), queues the exchange for the worker.
CHAT = needs(READ, SEARCH, EMBED, SEND, EXTRACT)

ROUTES: tuple[Route, ...] = (
    Route("GET", "/v1/engine/health/", "health", auth=False, needs=needs()),
    Route("POST", "/v1/engine/consolidate/", "consolidate", needs=needs(READ, WRITE, SEND)),
    Route("POST", "/v1/engine/retrieve/", "retrieve", needs=needs(READ, SEARCH, EMBED)),
    Route("DELETE", "/v1/engine/delete/", "delete", needs=needs(READ, WRITE, SEND, INDEX)),
    Route("POST", "/v1/engine/fork-delete/", "fork", needs=needs(READ, WRITE, SEND, INDEX)),
    Route("POST", "/v1/engine/embed/", "embed", needs=needs(EMBED)),
    # Game-NPC memory (docs/api.md §2): the game envelope {"code", "msg", "data"}.
    Route("POST", "/open/game/memory", "game_memory", needs=needs(READ)),
    Route("POST", "/open/game/recordmemory", "game_record_memory", needs=needs(READ, WRITE, SEND)),
    # Scoped memory bank (docs/api.md §3).
    Route("POST", "/v1/memories", "bank_create", needs=needs(READ, WRITE, INDEX, EMBED)),
    Route("GET", "/v1/memories/{id}", "bank_get", needs=needs(READ)),
    Route("GET", "/v1/memories/{id}/revisions", "bank_get", needs=needs(READ)),
    # A key fact of a memory extracted from dialogue, corrected or retired with history.
    Route("GET", "/v1/memories/{id}/keyFacts", "bank_get", needs=needs(READ)),
    Route("PATCH", "/v1/memories/{id}", "bank_patch", needs=BANK_PATCH),
    Route("PATCH", "/v1/memories/{id}/keyFacts/{index}", "bank_patch", needs=BANK_PATCH),
    Route("DELETE", "/v1/memories/{id}", "bank_delete", needs=needs(READ, WRITE, INDEX, SEND)),
    Route("POST", "/v1/memories/retrieve", "bank_retrieve", needs=BANK_RETRIEVE),
    Route("POST", "/v1/memories:retrieve", "bank_retrieve", rest_api=False, needs=BANK_RETRIEVE),
    Route("POST", "/v1/memories/generate", "bank_generate", needs=BANK_GENERATE),
    Route("POST", "/v1/memories:generate", "bank_generate", rest_api=False, needs=BANK_GENERATE),
    # OpenAI-compatible chat with long-term memory (docs/api.md §4).
    Route("POST", "/v1/chat/completions", "chat_completions", needs=CHAT),
    # OpenAI's model list, for front-ends that pick a model before they chat: settings only.
    Route("GET", "/v1/models", "chat_models", needs=needs()),
    Route("DELETE", "/v1/users/{userid}/memory", "forget_user", needs=needs(READ, WRITE, INDEX, SEND)),
    # The memory inspector (docs/inspector.md): read-only views of the key's data, a delete
    # preview and a forced extraction (a queue send). The queue view reads nothing of SQS (only
    # the worker may receive from a queue): it answers that the jobs are not listable there.
    Route("GET", "/v1/inspect/threads", "inspect_threads", needs=needs(READ)),
    Route("GET", "/v1/inspect/session", "inspect_session", needs=needs(READ)),
    Route("GET", "/v1/inspect/memories", "inspect_memories", needs=needs(READ)),
    Route("GET", "/v1/inspect/queue", "inspect_queue", needs=needs(READ)),
    Route("GET", "/v1/inspect/delete-preview", "inspect_delete_preview", needs=needs(READ)),
    Route("POST", "/v1/inspect/extract", "inspect_extract", needs=needs(READ, SEND)),
    # Export (docs/export.md): a page of the key's records per call, read from the table only.
    Route("GET", "/v1/export", "export", needs=needs(READ)),
)

# What API Gateway REST serves: every route but the spellings it cannot hold.
REST_ROUTES: tuple[Route, ...] = tuple(route for route in ROUTES if route.rest_api)


def functions() -> list[str]:
    """Every function folder, once, in route order."""
    return list(dict.fromkeys(route.function for route in ROUTES))


# Functions that are not HTTP routes, for the CDK app.
# Fed by a queue, not a route: the CDK app gives each its FIFO queue, dead-letter queue and event
# source mapping (partial batch responses).
WORKERS: tuple[str, ...] = ("extraction_worker",)
