"""Writing memories to the table, each one conditional TransactWriteItems call.

- save_memory: the memory is put only if its id is new and every source turn is claimed only
  while still buffered, so two workers or a retry can never write a second memory for a turn;
  a memory-bank fact adds one to its scope's count in the same call (`dynamodb_fact_counts`);
- update_memory: the memory is put only over the item just read (still there, same version and
  overflow parts), over at least as many parts as it had (so it never deletes one), keeping its
  session, thread, source turns and creation time; given the life the caller read, only while
  the stored memory's life is still that one (compare-and-set).
"""

from __future__ import annotations

from memory_engine.adapters.aws import dynamodb_fact_counts as fact_counts
from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_reads as reads
from memory_engine.adapters.aws.dynamodb_table import (
    TRANSACTION_LIMIT,
    DynamoTable,
    TransactionCancelled,
    backoff,
    put,
    update,
)
from memory_engine.adapters.aws.dynamodb_turns import MAX_ATTEMPTS, NOT_THERE
from memory_engine.errors import InvalidInput, Unavailable
from memory_engine.models.domain import Memory, TurnStatus
from memory_engine.models.life import MemoryLife

# A memory item's count of updates: each update is put only over the version it read.
VERSION = "item_version"
# What update_memory keeps of the stored memory whatever it is given (besides tenant and id).
_IDENTITY = (
    "session_uuid",
    "parent_session_uuid",
    "source_dialog_uuids",
    "first_seq",
    "last_seq",
    "created_at",
)


def save_memory(table: DynamoTable, memory: Memory, retention_days: int | None) -> bool:
    """Put the memory if its id is new, claiming each source turn only while still buffered."""
    memory = memory.retained(retention_days)
    sources = sorted(set(memory.source_dialog_uuids))
    item, chunks = items.memory_item(memory)
    actions = [put(item, NOT_THERE), *(put(part) for part in items.part_items(item, chunks))]
    if memory.session_uuid:
        # A memory-bank fact has no session: no reference, so a tenant's facts never pile up
        # in one partition (the session "" one) that every fact write would have to hit.
        actions.append(put(items.memref_item(memory)))
    if fact_counts.counted(memory):
        actions.append(fact_counts.added(memory))
    pk = keys.session_pk(memory.tenant, memory.session_uuid)
    for uuid in sources:
        actions.append(
            update(
                keys.key(pk, keys.turn_sk(uuid)),
                "SET #status = :extracted, memory_id = :memory REMOVE lsi1sk, gsi1pk, gsi1sk",
                {
                    ":extracted": items.s(TurnStatus.EXTRACTED.value),
                    ":memory": items.s(memory.memory_id),
                    ":buffered": items.s(TurnStatus.BUFFERED.value),
                },
                condition="#status = :buffered",
                names={"#status": "status"},
            )
        )
    if sources:
        actions.append(
            update(
                keys.key(pk, keys.SESSION_SK),
                "ADD buffered :claimed",
                {":claimed": items.n(-len(sources))},
                condition="attribute_exists(pk)",
            )
        )
    if len(actions) > TRANSACTION_LIMIT:
        raise InvalidInput(
            f"A memory over {len(sources)} turns does not fit one DynamoDB transaction; "
            "set MEMORY_ENGINE_BATCH_SIZE to 90 or less."
        )
    for attempt in range(MAX_ATTEMPTS):
        try:
            table.transact(actions)
            return True
        except TransactionCancelled as cancelled:
            if cancelled.any_failed():
                return False  # a turn already claimed or gone, or the id taken: write nothing
            backoff(attempt)
    raise Unavailable(f"Could not save memory {memory.memory_id} under contention; the job will retry.")


def update_memory(table: DynamoTable, memory: Memory, expected_life: MemoryLife | None = None) -> bool:
    pk = keys.memory_pk(memory.tenant, memory.memory_id)
    for attempt in range(MAX_ATTEMPTS):
        found = table.get(pk, keys.MEMORY_SK)
        if found is None:
            return False
        stored = reads.memories(table, [found])[0]
        if expected_life is not None and stored.life != expected_life:
            return False  # another writer changed what replaced what since the caller read it
        kept = memory.model_copy(update={name: getattr(stored, name) for name in _IDENTITY})
        # Over at least as many parts as it had: a record rewritten smaller is put over every
        # part, none left to delete (`dynamodb_items._spread`).
        old_parts = items.part_count(found)
        item, chunks = items.memory_item(kept, parts=old_parts)
        # Put only over the item just read: its version (every update adds one), and the same
        # part count, so no writer's parts are left over.
        version = items.number(found, VERSION)
        item[VERSION] = items.n(version + 1)
        condition = " AND ".join(
            (
                "attribute_exists(pk)",
                "parts = :parts" if old_parts else "attribute_not_exists(parts)",
                f"{VERSION} = :version" if version else f"attribute_not_exists({VERSION})",
            )
        )
        values = {
            **({":parts": items.n(old_parts)} if old_parts else {}),
            **({":version": items.n(version)} if version else {}),
        }
        actions = [put(item, condition, values or None)]
        actions += [put(part) for part in items.part_items(item, chunks)]
        try:
            table.transact(actions)
            return True
        except TransactionCancelled:
            backoff(attempt)  # deleted or rewritten meanwhile: read it again
    raise Unavailable(f"Memory {memory.memory_id} kept changing while being updated; retry shortly.")
