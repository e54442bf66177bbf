"""Writing a fork: all at once when it fits one transaction, else in chunks with a commit marker.

A fork's items (turns, memories, memory references, overflow parts) and its SESSION item are put
with `attribute_not_exists` conditions. When they fit one TransactWriteItems call (100 actions,
4 MB) the fork is atomic. A longer session is written in chunks, each a transaction, and the
SESSION item goes last, in the final chunk, as the commit marker:
- until it is written, no use case sees the target (they all start from the session item), except
  that its buffered turns may already show in `retrieve` of the target thread;
- when a chunk is refused (a concurrent fork or consolidate got there first) or the session
  appears meanwhile, the chunks already written are deleted again and the fork is a Conflict;
- if the process dies half-way, the written items (each stamped `fork_at`) stay until a later fork
  into the same target finds them older than FORK_LEASE_SECONDS and deletes them before writing.
A consolidate that meets a turn of an unfinished fork answers 409 instead of claiming the dialog.
"""

from __future__ import annotations

import time

from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_reads as reads
from memory_engine.adapters.aws.dynamodb_table import (
    TRANSACTION_BYTES,
    TRANSACTION_LIMIT,
    Action,
    DynamoTable,
    Item,
    TransactionCancelled,
    action_key,
    put,
)
from memory_engine.errors import Conflict
from memory_engine.ports import ForkPlan

FORK_LEASE_SECONDS = 15 * 60
# Room left in each chunk's 4 MB for request overhead.
_CHUNK_BYTES = TRANSACTION_BYTES - 256 * 1024
_NOT_THERE = "attribute_not_exists(pk)"


def write_fork(table: DynamoTable, plan: ForkPlan, now: float | None = None) -> None:
    """Write the plan's target session, turns and memories; Conflict if the target exists."""
    plan.check_one_session()
    target = plan.target
    pk = keys.session_pk(target.tenant, target.session_uuid)
    stamp = time.time() if now is None else now
    if table.get(pk, keys.SESSION_SK) is not None:
        raise _exists(target.session_uuid)
    _clear_leftovers(table, target.tenant, target.session_uuid, stamp)

    fork_at = {"fork_at": items.n(int(stamp))}
    records: list[Item] = []
    for turn in plan.turns:
        item, chunks = items.turn_item(turn, target.parent_session_uuid)
        records += [item | fork_at, *(part | fork_at for part in items.part_items(item, chunks))]
    for memory in plan.memories:
        item, chunks = items.memory_item(memory)
        records += [item | fork_at, *(part | fork_at for part in items.part_items(item, chunks))]
        records.append(items.memref_item(memory) | fork_at)
    next_seq = max((turn.seq for turn in plan.turns), default=-1) + 1
    buffered = sum(1 for turn in plan.turns if turn.status.value == "buffered")
    session = items.session_item(target, next_seq, buffered)

    written: list[Action] = []
    for chunk in _chunks([put(record, _NOT_THERE) for record in records] + [put(session, _NOT_THERE)]):
        try:
            table.transact(chunk)
        except TransactionCancelled as cancelled:
            _undo(table, written)
            if cancelled.any_failed():
                raise _exists(target.session_uuid) from cancelled
            raise
        except Exception:
            _undo(table, written)
            raise
        written.extend(chunk)


def _chunks(actions: list[Action]) -> list[list[Action]]:
    """Consecutive groups within DynamoDB's transaction limits (the last holds the session put)."""
    groups: list[list[Action]] = [[]]
    size = 0
    for action in actions:
        weight = items.item_size(action["Put"]["Item"])
        if groups[-1] and (len(groups[-1]) == TRANSACTION_LIMIT or size + weight > _CHUNK_BYTES):
            groups.append([])
            size = 0
        groups[-1].append(action)
        size += weight
    return groups


def _undo(table: DynamoTable, written: list[Action]) -> None:
    if written:
        table.batch_write(deletes=[action_key(action) for action in written])


def _clear_leftovers(table: DynamoTable, tenant: str, session_uuid: str, now: float) -> None:
    """Delete what an interrupted fork into this target left behind, once its lease is over."""
    found = [
        item for item in reads.partition(table, keys.session_pk(tenant, session_uuid)) if "fork_at" in item
    ]
    if not found:
        return
    if max(items.number(item, "fork_at") for item in found) > now - FORK_LEASE_SECONDS:
        raise Conflict(
            f"Another fork into session {session_uuid} is being written; retry in a minute "
            "or fork into another target_session_uuid.",
            [{"field": "target_session_uuid", "message": "a fork into it is in progress"}],
        )
    doomed = reads.keys_of(found)
    for ref in (item for item in found if items.text(item, "kind") == "memref"):
        memory = table.get(keys.memory_pk(tenant, items.text(ref, "memory_id") or ""), keys.MEMORY_SK)
        if memory is not None:
            doomed += reads.keys_of([memory]) + items.part_keys(memory)
    table.batch_write(deletes=doomed)


def _exists(session_uuid: str) -> Conflict:
    return Conflict(
        f"Session {session_uuid} already exists; fork into a new target_session_uuid.",
        [{"field": "target_session_uuid", "message": "already exists"}],
    )
