"""Deleting a memory, or a dialog with its memory in cascade: each one TransactWriteItems call.
Deleting a whole session: transactions of at most 100 actions, the session item last.

The items are read first (strongly consistent), then written back under conditions that hold only
if nothing changed since (the turn still points at the memory, the memory still exists); when
another writer got there first the transaction is cancelled and the whole step is read and tried
again. So a delete racing an extraction can neither orphan a turn nor resurrect a memory.
"""

from __future__ import annotations

from itertools import islice

from memory_engine.adapters.aws import dynamodb_fact_counts as fact_counts
from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_reads as reads
from memory_engine.adapters.aws.dynamodb_table import (
    TRANSACTION_LIMIT,
    Action,
    DynamoTable,
    Item,
    TransactionCancelled,
    backoff,
    delete,
    update,
)
from memory_engine.errors import NotFound, Unavailable
from memory_engine.models.domain import Memory, Turn, TurnStatus
from memory_engine.ports import RemovalOutcome

MAX_ATTEMPTS = 8
_STATUS = {"#status": "status"}


def delete_memory(table: DynamoTable, tenant: str, memory_id: str) -> RemovalOutcome:
    """Delete one memory; its turns stay as history, marked forgotten."""
    for attempt in range(MAX_ATTEMPTS):
        found = table.get(keys.memory_pk(tenant, memory_id), keys.MEMORY_SK)
        if found is None:
            raise NotFound(
                f"No memory {memory_id} for this tenant; it may be deleted already. "
                "List the session's memories to find a current id."
            )
        memory = reads.memories(table, [found])[0]
        actions = _memory_removal(found, memory)
        if fact_counts.counted(memory):
            actions += fact_counts.removed(table, memory)
        owned = _owned_turns(table, memory)
        for turn in owned:
            actions.append(
                update(
                    _turn_key(turn),
                    "SET #status = :forgotten REMOVE memory_id",
                    {":forgotten": items.s(TurnStatus.FORGOTTEN.value), ":memory": items.s(memory_id)},
                    condition="memory_id = :memory",
                    names=_STATUS,
                )
            )
        try:
            table.transact(actions)
        except TransactionCancelled:
            backoff(attempt)
            continue
        count = reads.buffered_count(table, tenant, memory.session_uuid)
        forgotten = [turn.dialog_uuid for turn in owned]
        return RemovalOutcome(
            deleted_memories=[memory_id],
            buffered_count=count,
            session_uuid=memory.session_uuid,
            forgotten_dialogs=forgotten,
            removed=[memory],
        )
    raise Unavailable(f"Memory {memory_id} kept changing while being deleted; retry shortly.")


def delete_dialog(table: DynamoTable, tenant: str, session_uuid: str, dialog_uuid: str) -> RemovalOutcome:
    """Delete a turn and, if it was extracted, its memory; the memory's other turns are buffered
    again. The session's last turn takes the session with it (in the same transaction, only while
    no turn was appended meanwhile): no empty session is left listed."""
    pk = keys.session_pk(tenant, session_uuid)
    for attempt in range(MAX_ATTEMPTS):
        session = table.get(pk, keys.SESSION_SK)
        if session is None:
            raise NotFound(
                f"No session {session_uuid} for this tenant; check session_uuid "
                "(a session exists once its first turn was consolidated)."
            )
        found = table.get(pk, keys.turn_sk(dialog_uuid))
        if found is None:
            raise NotFound(
                f"Session {session_uuid} has no dialog {dialog_uuid}; it may be deleted already. "
                "Send a dialog uuid of this session or a memory id."
            )
        turn = reads.turns(table, [found])[0]
        thread = items.text(session, "parent_session_uuid") or ""
        outcome = RemovalOutcome(deleted_dialogs=[dialog_uuid], thread=thread)
        actions = [_unchanged_turn_removal(found, turn), *(delete(part) for part in items.part_keys(found))]
        delta = -1 if turn.status is TurnStatus.BUFFERED else 0
        if turn.status is TurnStatus.EXTRACTED and turn.memory_id:
            rebuffered = _cascade(table, turn, actions, outcome)
            delta += len(rebuffered)
        if _only_record(table, pk, found, outcome.deleted_memories):
            # One write to the session item per transaction: its delete, conditioned on the
            # counter a concurrent append moves, instead of the buffer count's update.
            actions.append(
                delete(keys.key(pk, keys.SESSION_SK), "next_seq = :seq", {":seq": session["next_seq"]})
            )
            outcome.deleted_session = True
        elif delta:
            actions.append(
                update(
                    keys.key(pk, keys.SESSION_SK),
                    "ADD buffered :delta",
                    {":delta": items.n(delta)},
                    condition="attribute_exists(pk)",
                )
            )
        try:
            table.transact(actions)
        except TransactionCancelled:
            backoff(attempt)
            continue
        if not outcome.deleted_session:
            outcome.buffered_count = reads.buffered_count(table, tenant, session_uuid)
        return outcome
    raise Unavailable(f"Dialog {dialog_uuid} kept changing while being deleted; retry shortly.")


def _only_record(table: DynamoTable, pk: str, turn: Item, deleted_memories: list[str]) -> bool:
    """Whether `turn` is the session's last turn and no memory of the session outlives this
    delete: two key reads of at most two items each, whatever the session's size."""
    turns = _first_keys(table, pk, keys.TURN_PREFIX)
    if turns != [turn[keys.SK]["S"]]:
        return False
    going = tuple(f"#{memory_id}" for memory_id in deleted_memories)
    return all(going and ref.endswith(going) for ref in _first_keys(table, pk, keys.MEMREF_PREFIX))


def _first_keys(table: DynamoTable, pk: str, prefix: str) -> list[str]:
    found = table.query(
        KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues={":pk": items.s(pk), ":prefix": items.s(prefix)},
        ProjectionExpression="sk",
        Limit=2,
    )
    return [item[keys.SK]["S"] for item in islice(found, 2)]


def _cascade(table: DynamoTable, turn: Turn, actions: list[Action], outcome: RemovalOutcome) -> list[Turn]:
    """Add the memory's deletion and its other turns' return to the buffer to `actions`."""
    memory_id = turn.memory_id or ""
    found = table.get(keys.memory_pk(turn.tenant, memory_id), keys.MEMORY_SK)
    if found is not None:
        memory = reads.memories(table, [found])[0]
        actions.extend(_memory_removal(found, memory))
        outcome.deleted_memories.append(memory_id)
        outcome.removed.append(memory)
        siblings = [t for t in _owned_turns(table, memory) if t.dialog_uuid != turn.dialog_uuid]
    else:  # the memory is gone already: find the turns that still point at it
        siblings = [
            t
            for t in reads.turns(table, reads.session_turn_items(table, turn.tenant, turn.session_uuid))
            if t.memory_id == memory_id and t.dialog_uuid != turn.dialog_uuid
        ]
    thread = _thread_of(table, turn)
    for sibling in siblings:
        indexed = items.buffered_keys(sibling.tenant, sibling.session_uuid, thread, sibling.seq)
        actions.append(
            update(
                _turn_key(sibling),
                "SET #status = :buffered, lsi1sk = :lsi, gsi1pk = :gpk, gsi1sk = :gsk REMOVE memory_id",
                {
                    ":buffered": items.s(TurnStatus.BUFFERED.value),
                    ":memory": items.s(memory_id),
                    ":lsi": indexed[keys.LSI1_SK],
                    ":gpk": indexed[keys.GSI1_PK],
                    ":gsk": indexed[keys.GSI1_SK],
                },
                condition="memory_id = :memory",
                names=_STATUS,
            )
        )
    outcome.rebuffered_dialogs.extend(sibling.dialog_uuid for sibling in siblings)
    return siblings


def _memory_removal(found: Item, memory: Memory) -> list[Action]:
    removal = [delete(reads.keys_of([found])[0], condition="attribute_exists(pk)")]
    if memory.session_uuid:  # a memory-bank fact belongs to no session: it has no reference
        ref = keys.memref_sk(memory.first_seq, memory.memory_id)
        removal.append(delete(keys.key(keys.session_pk(memory.tenant, memory.session_uuid), ref)))
    return removal + [delete(part) for part in items.part_keys(found)]


def _unchanged_turn_removal(found: Item, turn: Turn) -> Action:
    values = {":status": items.s(turn.status.value)}
    condition = "#status = :status"
    if turn.memory_id:
        values[":memory"] = items.s(turn.memory_id)
        condition += " AND memory_id = :memory"
    action = delete(reads.keys_of([found])[0], condition=condition, values=values)
    action["Delete"]["ExpressionAttributeNames"] = _STATUS
    return action


def _owned_turns(table: DynamoTable, memory: Memory) -> list[Turn]:
    """The memory's source turns that still point at it, in seq order."""
    found = reads.turns(
        table, reads.turn_items(table, memory.tenant, memory.session_uuid, memory.source_dialog_uuids)
    )
    return sorted((t for t in found if t.memory_id == memory.memory_id), key=lambda t: t.seq)


def _thread_of(table: DynamoTable, turn: Turn) -> str:
    session = table.get(keys.session_pk(turn.tenant, turn.session_uuid), keys.SESSION_SK)
    return "" if session is None else items.text(session, "parent_session_uuid") or ""


def _turn_key(turn: Turn) -> Item:
    return keys.key(keys.session_pk(turn.tenant, turn.session_uuid), keys.turn_sk(turn.dialog_uuid))


# -- a whole session ---------------------------------------------------------------------------

# What delete_session needs of a session partition's items: never the turns' text or parts' bodies.
_OUTLINE = (keys.PK, keys.SK, "kind", "dialog_uuid", "seq", "memory_id", "next_seq", "buffered")


def delete_session(table: DynamoTable, tenant: str, session_uuid: str) -> RemovalOutcome:
    """Delete the session item, its turns, references and overflow parts, and its memories (with
    their parts), in transactions of at most 100 actions. See `_session_chunks` for the order."""
    if not session_uuid:
        return RemovalOutcome()  # "" is no session: it is what memory-bank facts carry, and they stay
    pk = keys.session_pk(tenant, session_uuid)
    dialogs: dict[str, int] = {}
    memory_ids: set[str] = set()
    for attempt in range(MAX_ATTEMPTS):
        found = _outline(table, pk)
        session = next((item for item in found if item[keys.SK]["S"] == keys.SESSION_SK), None)
        if session is None:  # unknown, or deleted by a concurrent call: nothing (more) to delete
            break
        turns = [item for item in found if items.text(item, "kind") == "turn"]
        dialogs |= {items.required(item, "dialog_uuid"): items.number(item, "seq") for item in turns}
        refs = [item for item in found if item[keys.SK]["S"].startswith(keys.MEMREF_PREFIX)]
        memory_ids |= {items.required(ref, "memory_id") for ref in refs}
        chunks = _session_chunks(table, tenant, session, [item for item in found if item is not session])
        try:
            for chunk in chunks:
                table.transact(chunk)
        except TransactionCancelled:
            # A turn, memory or claim landed meanwhile (the session's counters moved) or another
            # writer held an item: read what is left and go on.
            backoff(attempt)
            continue
        break
    else:
        raise Unavailable(f"Session {session_uuid} kept changing while being deleted; retry shortly.")
    return RemovalOutcome(
        deleted_memories=sorted(memory_ids), deleted_dialogs=sorted(dialogs, key=lambda uuid: dialogs[uuid])
    )


def _outline(table: DynamoTable, pk: str) -> list[Item]:
    """Every item of the partition, strongly consistent, with only the attributes in `_OUTLINE`."""
    names = {f"#a{number}": name for number, name in enumerate(_OUTLINE)}
    return list(
        table.query(
            KeyConditionExpression="#a0 = :pk",
            ExpressionAttributeValues={":pk": items.s(pk)},
            ExpressionAttributeNames=names,
            ProjectionExpression=", ".join(names),
            ConsistentRead=True,
        )
    )


def _session_chunks(table: DynamoTable, tenant: str, session: Item, rest: list[Item]) -> list[list[Action]]:
    """The deletions in order, grouped into transactions: memories first (each with its parts, so
    no part outlives its owner), then every other item of the session's partition, and the
    SESSION item last, only if its counters are still those read.

    The session item is the commit marker, as for a long fork: while it exists, everything of
    the session is still listed under it (a memory goes before its reference, a turn's parts stay
    in the partition), so an interrupted delete leaves a live, smaller session that the next call
    finishes, never an orphan nothing points at. A turn consolidated or a memory extracted
    meanwhile moves `next_seq` or `buffered`, the last transaction is refused, and the next round
    deletes that too; once the session item is gone, a first turn starts the session afresh.
    """
    refs = [item for item in rest if item[keys.SK]["S"].startswith(keys.MEMREF_PREFIX)]
    memory_ids = [items.required(ref, "memory_id") for ref in refs]
    groups: list[list[Action]] = []
    memory_keys = [keys.key(keys.memory_pk(tenant, memory_id), keys.MEMORY_SK) for memory_id in memory_ids]
    for memory in table.batch_get(memory_keys, [keys.PK, keys.SK, "parts"]) if memory_keys else []:
        groups.append(
            [delete(part) for part in items.part_keys(memory)] + [delete(reads.keys_of([memory])[0])]
        )
    groups += [[delete(item_key)] for item_key in reads.keys_of(rest)]
    groups.append(
        [
            delete(
                reads.keys_of([session])[0],
                condition="next_seq = :seq AND buffered = :buffered",
                values={":seq": session["next_seq"], ":buffered": session["buffered"]},
            )
        ]
    )
    chunks: list[list[Action]] = [[]]
    for group in groups:
        if chunks[-1] and len(chunks[-1]) + len(group) > TRANSACTION_LIMIT:
            chunks.append([])
        chunks[-1].extend(group)
    return chunks
