"""The route table as data: read by the local server and by the CDK app alike.

A route added here is served locally and gets its own Lambda and API Gateway method, with the
permissions its `needs` name (infra/access.py turns them into IAM statements; a route without
needs fails the synth).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Need(StrEnum):
    """What a function may touch on AWS; nothing beyond its needs is granted. The table is granted
    action by action: a DynamoDB transaction is authorized per item action, so a function that
    only ever puts items inside one holds PutItem and nothing else of the table's writes."""

    TABLE_GET = "table:get"  # GetItem: one record by its key
    TABLE_QUERY = "table:query"  # Query on the table and its indexes: listings
    TABLE_BATCH_GET = "table:batch-get"  # BatchGetItem: listed records, and any record's overflow parts
    TABLE_PUT = "table:put"  # PutItem: new records (alone or in a transaction)
    TABLE_UPDATE = "table:update"  # UpdateItem: counters, claims, statuses
    TABLE_DELETE = "table:delete"  # DeleteItem: removals
    TABLE_BATCH_WRITE = "table:batch-write"  # BatchWriteItem: clearing an interrupted fork
    KEYS_READ = "keys:read"  # GetItem only: the authorizer's hashed-key lookup
    QUEUE_SEND = "queue:send"  # SendMessage to the extraction queue
    # The engine's configuration (table, queue, index names) with no permission on any of them:
    # the inspector's queue view, which on SQS answers that jobs cannot be listed.
    ENGINE_CONFIG = "engine:config"
    INDEX_READ = "index:read"  # search the index
    INDEX_WRITE = "index:write"  # index and delete documents
    INDEX_ADMIN = "index:admin"  # create the index and its mapping (deploy time)
    EMBED = "embed"  # invoke the embedding function or endpoint
    EXTRACT = "extract"  # the LLM configuration (model, endpoint) and reading its key's secret


GET, QUERY, BATCH_GET = Need.TABLE_GET, Need.TABLE_QUERY, Need.TABLE_BATCH_GET
PUT, UPDATE, DELETE = Need.TABLE_PUT, Need.TABLE_UPDATE, Need.TABLE_DELETE
BATCH_WRITE = Need.TABLE_BATCH_WRITE
SEND = Need.QUEUE_SEND
SEARCH, INDEX, EMBED, EXTRACT = Need.INDEX_READ, Need.INDEX_WRITE, Need.EMBED, Need.EXTRACT
# Reading records and listings (a record over 300 KB comes back with its overflow parts).
READ = (GET, QUERY, BATCH_GET)
# What building the whole engine and running every job takes (the extraction worker's needs):
# extraction claims turns (put, update), forgetting a user and the expiry sweep delete.
ENGINE_NEEDS = frozenset({*READ, PUT, UPDATE, DELETE, SEND, SEARCH, INDEX, EMBED, EXTRACT})
# A memory's removal (`Store.delete_memory`): read with its parts, deleted, its turns marked
# forgotten (an engine memory's) or its scope's count read and lowered, or deleted with the
# scope's last fact (a fact's), the session's buffer count read back.
REMOVE_MEMORY = (GET, BATCH_GET, DELETE, UPDATE)
# A turn appended (`Store.append_turn`): the session read, then created or its counters moved.
APPEND_TURN = (GET, PUT, UPDATE)
# A memory rewritten in place (`Store.update_memory`): read, put over (over every overflow part it
# had, so no part is ever left to delete).
REWRITE_MEMORY = (GET, BATCH_GET, PUT)


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


# Scoped memory bank: facts are embedded and indexed as they are written; a search reads the
# scope's young facts from the table (read-your-writes), the index's hits by key.
BANK_RETRIEVE = needs(*READ, SEARCH, EMBED)
# Merges facts: the nearest read, new ones put (each adding one to its scope's count, an update
# in the same transaction), changed or contradicted ones rewritten in place.
BANK_GENERATE = needs(*READ, *REWRITE_MEMORY, PUT, UPDATE, SEARCH, INDEX, EMBED, EXTRACT)
# A correction (a fact's wording, or a key fact of an extracted memory) rewrites the memory in
# place, re-embeds what it changed and writes its documents again (an extracted memory's with its
# turns' documents: the session's turns are queried for their lines and dates).
BANK_PATCH = needs(*REWRITE_MEMORY, QUERY, INDEX, EMBED)
# Chat: reads the user's memories, calls the upstream model (its key is the extractor's
# configuration), queues the exchange for the worker.
CHAT = needs(*READ, SEARCH, EMBED, SEND, EXTRACT)

ROUTES: tuple[Route, ...] = (
    Route("GET", "/v1/engine/health/", "health", auth=False, needs=needs()),
    # Appends the turn; a new session's first turn reads the thread's buffered turns (parts too)
    # to queue the extraction of the sessions it closes.
    Route("POST", "/v1/engine/consolidate/", "consolidate", needs=needs(*READ, *APPEND_TURN, SEND)),
    # Reads buffered turns and the hits' memories; a time question reads a superseding memory.
    Route("POST", "/v1/engine/retrieve/", "retrieve", needs=needs(*READ, SEARCH, EMBED)),
    # A dialog deleted with its memory, whose other turns go back to the buffer (updated); a
    # delete from an eventually consistent index queues its second pass (usecases/index_purge.py).
    # A deleted memory's statements stop replacing (usecases/removed_facts.py): the facts they
    # replaced are rewritten in place and the thread's statements record put over (PutItem). The
    # delete is recorded before its first change and the record deleted after its last (PutItem,
    # DeleteItem: usecases/delete_intents.py).
    Route(
        "DELETE",
        "/v1/engine/delete/",
        "delete",
        needs=needs(*READ, *REMOVE_MEMORY, *REWRITE_MEMORY, SEND, INDEX),
    ),
    # Writes the copies in transactions of puts; clears what an interrupted fork left (batch).
    Route("POST", "/v1/engine/fork-delete/", "fork", needs=needs(*READ, PUT, BATCH_WRITE, SEND, INDEX)),
    Route("POST", "/v1/engine/embed/", "embed", needs=needs(EMBED)),
    # Game-NPC memory (docs/api.md §2): the game envelope {"code", "msg", "data"}.
    Route("POST", "/open/game/memory", "game_memory", needs=needs(*READ)),
    Route("POST", "/open/game/recordmemory", "game_record_memory", needs=needs(*APPEND_TURN, SEND)),
    # Scoped memory bank (docs/api.md §3).
    # The tenant's retention read, the fact put (with its parts) and its scope's count added to
    # (an update in the same transaction).
    Route("POST", "/v1/memories", "bank_create", needs=needs(GET, PUT, UPDATE, INDEX, EMBED)),
    Route("GET", "/v1/memories/{id}", "bank_get", needs=needs(GET, BATCH_GET)),
    Route("GET", "/v1/memories/{id}/revisions", "bank_get", needs=needs(GET, BATCH_GET)),
    # A key fact of a memory extracted from dialogue, corrected or retired with history.
    Route("GET", "/v1/memories/{id}/keyFacts", "bank_get", needs=needs(GET, BATCH_GET)),
    Route("PATCH", "/v1/memories/{id}", "bank_patch", needs=BANK_PATCH),
    Route("PATCH", "/v1/memories/{id}/keyFacts/{index}", "bank_patch", needs=BANK_PATCH),
    # An engine memory deleted here stops replacing as through /v1/engine/delete/ (PutItem); the
    # delete is recorded as there too.
    Route(
        "DELETE",
        "/v1/memories/{id}",
        "bank_delete",
        needs=needs(*REMOVE_MEMORY, *REWRITE_MEMORY, INDEX, SEND),
    ),
    Route("POST", "/v1/memories/retrieve", "bank_retrieve", needs=BANK_RETRIEVE),
    Route("POST", "/v1/memories:retrieve", "bank_retrieve", rest_api=False, needs=BANK_RETRIEVE),
    Route("POST", "/v1/memories/generate", "bank_generate", needs=BANK_GENERATE),
    Route("POST", "/v1/memories:generate", "bank_generate", rest_api=False, needs=BANK_GENERATE),
    # OpenAI-compatible chat with long-term memory (docs/api.md §4).
    Route("POST", "/v1/chat/completions", "chat_completions", needs=CHAT),
    # OpenAI's model list, for front-ends that pick a model before they chat: settings only.
    Route("GET", "/v1/models", "chat_models", needs=needs()),
    # The user's facts and chat session deleted now, and again behind their queued exchanges;
    # recorded before the first removal and the record deleted after the last (PutItem,
    # DeleteItem: usecases/delete_intents.py).
    Route(
        "DELETE",
        "/v1/users/{userid}/memory",
        "forget_user",
        needs=needs(*READ, *REMOVE_MEMORY, PUT, INDEX, SEND),
    ),
    # The memory inspector (docs/inspector.md): read-only views of the key's data, a delete
    # preview and a forced extraction (a queue send). The queue view reads nothing of SQS (only
    # the worker may receive from a queue): it answers that the jobs are not listable there.
    # Threads are listings (keys-only index pages, then the records by key).
    Route("GET", "/v1/inspect/threads", "inspect_threads", needs=needs(QUERY, BATCH_GET)),
    Route("GET", "/v1/inspect/session", "inspect_session", needs=needs(*READ)),
    Route("GET", "/v1/inspect/memories", "inspect_memories", needs=needs(*READ)),
    Route("GET", "/v1/inspect/queue", "inspect_queue", needs=needs(Need.ENGINE_CONFIG)),
    Route("GET", "/v1/inspect/delete-preview", "inspect_delete_preview", needs=needs(*READ)),
    Route("POST", "/v1/inspect/extract", "inspect_extract", needs=needs(*READ, SEND)),
    # Export (docs/export.md): a page of the key's records per call, read from the table only.
    Route("GET", "/v1/export", "export", needs=needs(*READ)),
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
