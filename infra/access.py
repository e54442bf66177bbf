"""Which AWS resources each function may touch: least privilege, decided per function.

A function listed here gets exactly these needs. A function that is not listed (a route added to
functions/routes.py by a later change) gets every engine need, so it works on first deploy;
list it here to narrow its permissions.
"""

from __future__ import annotations

from enum import StrEnum


class Need(StrEnum):
    TABLE_READ = "table:read"  # GetItem, Query, BatchGetItem on the table and its indexes
    TABLE_WRITE = "table:write"  # Put/Update/Delete/BatchWrite, ConditionCheck
    KEYS_READ = "keys:read"  # GetItem only: the authorizer's hashed-key lookup
    QUEUE_SEND = "queue:send"  # SendMessage to the extraction queue
    INDEX_READ = "index:read"  # search the index
    INDEX_WRITE = "index:write"  # index and delete documents
    INDEX_ADMIN = "index:admin"  # create the index and its mapping (deploy time)
    EMBED = "embed"  # invoke the embedding function or endpoint
    EXTRACT = "extract"  # the extractor's configuration (LLM model, endpoint, key)


ENGINE_NEEDS = frozenset(
    {
        Need.TABLE_READ,
        Need.TABLE_WRITE,
        Need.QUEUE_SEND,
        Need.INDEX_READ,
        Need.INDEX_WRITE,
        Need.EMBED,
        Need.EXTRACT,
    }
)

FUNCTION_NEEDS: dict[str, frozenset[Need]] = {
    "health": frozenset(),
    "consolidate": frozenset({Need.TABLE_READ, Need.TABLE_WRITE, Need.QUEUE_SEND}),
    "retrieve": frozenset({Need.TABLE_READ, Need.INDEX_READ, Need.EMBED}),
    "delete": frozenset({Need.TABLE_READ, Need.TABLE_WRITE, Need.QUEUE_SEND, Need.INDEX_WRITE}),
    "fork_delete": frozenset({Need.TABLE_READ, Need.TABLE_WRITE, Need.QUEUE_SEND, Need.INDEX_WRITE}),
    "embed": frozenset({Need.EMBED}),
    # Game-NPC dialect.
    "game_memory": frozenset({Need.TABLE_READ}),
    "game_record_memory": frozenset({Need.TABLE_READ, Need.TABLE_WRITE, Need.QUEUE_SEND}),
    # Scoped memory bank: facts are embedded and indexed as they are written.
    "memories_create": frozenset({Need.TABLE_READ, Need.TABLE_WRITE, Need.INDEX_WRITE, Need.EMBED}),
    "memories_get": frozenset({Need.TABLE_READ}),
    "memories_delete": frozenset({Need.TABLE_READ, Need.TABLE_WRITE, Need.INDEX_WRITE}),
    "memories_retrieve": frozenset({Need.TABLE_READ, Need.INDEX_READ, Need.EMBED}),
    "memories_generate": frozenset(
        {Need.TABLE_READ, Need.TABLE_WRITE, Need.INDEX_READ, Need.INDEX_WRITE, Need.EMBED, Need.EXTRACT}
    ),
    # Chat: reads the user's memories, calls the upstream model (its key is the extractor's
    # configuration), queues the exchange for the worker.
    "chat_completions": frozenset(
        {Need.TABLE_READ, Need.INDEX_READ, Need.EMBED, Need.QUEUE_SEND, Need.EXTRACT}
    ),
    "user_memory_delete": frozenset({Need.TABLE_READ, Need.TABLE_WRITE, Need.INDEX_WRITE, Need.QUEUE_SEND}),
    # The memory inspector: reads only, but for the forced extraction (a queue send). The queue
    # view reads nothing of SQS (only the worker may receive from a queue): it answers that the
    # jobs are not listable there.
    "inspect_threads": frozenset({Need.TABLE_READ}),
    "inspect_session": frozenset({Need.TABLE_READ}),
    "inspect_memories": frozenset({Need.TABLE_READ}),
    "inspect_queue": frozenset({Need.TABLE_READ}),
    "inspect_delete_preview": frozenset({Need.TABLE_READ}),
    "inspect_extract": frozenset({Need.TABLE_READ, Need.QUEUE_SEND}),
    # Receiving from its queue is granted by the event source mapping, not listed here. It sends
    # a follow-up job when a busy session still holds a batch's worth of turns.
    # It builds the whole engine, so it needs what the engine does.
    "extraction_worker": ENGINE_NEEDS,
    "authorizer": frozenset({Need.KEYS_READ}),
    "index_bootstrap": frozenset({Need.INDEX_ADMIN}),
}


def needs_of(function: str) -> frozenset[Need]:
    return FUNCTION_NEEDS.get(function, ENGINE_NEEDS)


def uses_engine(needs: frozenset[Need]) -> bool:
    """Whether the function builds the whole engine (and so needs its whole configuration)."""
    return bool(needs - {Need.KEYS_READ})
