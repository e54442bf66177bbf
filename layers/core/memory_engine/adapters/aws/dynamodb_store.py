"""`Store` on one DynamoDB table (single-table design: docs/dynamodb.md).

Every write that the engine's guarantees rest on is one conditional TransactWriteItems call:
- consolidate: the turn is put only if its dialog uuid is new, and the session's `next_seq` and
  `buffered` counter move only from the values just read (optimistic concurrency, retried), so seqs
  are consecutive and the buffer count exact: one write per turn;
- save_memory: the memory is put only if its id is new and every source turn is claimed only
  while still buffered, so two workers or a retry can never write a second memory for a turn;
- update_memory: the memory is put only over the item just read (still there, same overflow
  parts), keeping its session, thread, source turns and creation time;
- deletes (of a memory, a dialog, a whole session) and forks: see `dynamodb_removal` and
  `dynamodb_fork`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from itertools import islice

from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_lifecycle as lifecycle
from memory_engine.adapters.aws import dynamodb_reads as reads
from memory_engine.adapters.aws.dynamodb_fork import write_fork
from memory_engine.adapters.aws.dynamodb_removal import delete_dialog, delete_memory, delete_session
from memory_engine.adapters.aws.dynamodb_sessions import (
    backfill_fact_listing,
    backfill_session_listing,
    fact_scopes,
    list_sessions,
    sessions_after,
)
from memory_engine.adapters.aws.dynamodb_table import (
    TRANSACTION_LIMIT,
    DynamoTable,
    TransactionCancelled,
    backoff,
    delete,
    put,
    update,
)
from memory_engine.adapters.encoding import pack_vector
from memory_engine.errors import Conflict, InvalidInput, Unavailable
from memory_engine.models.domain import Memory, Session, Turn, TurnStatus, check_thread
from memory_engine.ports import Clock, ConsolidateOutcome, FactScope, ForkPlan, RemovalOutcome
from memory_engine.ports.clock import SystemClock

MAX_ATTEMPTS = 12  # optimistic retries of one write under contention before answering 503
_NOT_THERE = "attribute_not_exists(pk)"
_PAGE = 100
# What update_memory keeps of the stored memory whatever it is given (besides tenant and id).
_IDENTITY = (
    "session_uuid",
    "parent_session_uuid",
    "source_dialog_uuids",
    "first_seq",
    "last_seq",
    "created_at",
)


class DynamoDbStore:
    """The `Store` port over DynamoDB. No AWS call happens before the first method call."""

    def __init__(
        self, table_name: str, region: str | None = None, dynamodb: object = None, clock: Clock | None = None
    ) -> None:
        self.table = DynamoTable(table_name, region, dynamodb)
        self._clock = clock or SystemClock()

    def _live(self, memories: Iterable[Memory]) -> list[Memory]:
        """What a read gives back: an expired memory is gone from the instant it expires."""
        now = self._clock.now()
        return [memory for memory in memories if not memory.expired(now)]

    # -- sessions and turns ------------------------------------------------------------------

    def get_session(self, tenant: str, session_uuid: str) -> Session | None:
        item = self.table.get(keys.session_pk(tenant, session_uuid), keys.SESSION_SK)
        return None if item is None else items.session_from(item)

    def list_sessions(
        self, tenant: str, after: tuple[str, str] | None = None, limit: int | None = None
    ) -> list[Session]:
        return list_sessions(self.table, tenant, after, limit)

    def fact_scopes(self, tenant: str, after: str | None = None, limit: int = 100) -> list[FactScope]:
        return fact_scopes(self.table, tenant, after, limit)

    def sessions_after(self, tenant: str, after: tuple[str, str] | None, limit: int) -> list[Session]:
        return sessions_after(self.table, tenant, after, limit)

    def backfill_session_listing(self) -> int:
        """List the sessions written before the listing index existed (`dynamodb_sessions`)."""
        return backfill_session_listing(self.table)

    def backfill_fact_listing(self) -> int:
        """List the facts written before their listing existed (`dynamodb_sessions`)."""
        return backfill_fact_listing(self.table)

    def append_turn(self, session: Session, turn: Turn) -> ConsolidateOutcome:
        if (turn.tenant, turn.session_uuid) != (session.tenant, session.session_uuid):
            raise InvalidInput(
                f"Turn {turn.dialog_uuid} names session {turn.session_uuid} of tenant {turn.tenant}, "
                f"but is appended to session {session.session_uuid} of tenant {session.tenant}."
            )
        pk = keys.session_pk(session.tenant, session.session_uuid)
        for attempt in range(MAX_ATTEMPTS):
            current = self.table.get(pk, keys.SESSION_SK)
            if current is None:
                seq, buffered, thread = session.next_seq, 0, session.parent_session_uuid
                session_write = put(items.session_item(session, seq + 1, 1), _NOT_THERE)
            else:
                seq, buffered = items.number(current, "next_seq"), items.number(current, "buffered")
                thread = items.text(current, "parent_session_uuid") or ""
                check_thread(session.session_uuid, thread, session.parent_session_uuid)
                # The listing keys too: a session written before gsi4 existed is listed from its
                # next turn on (unchanged keys cost the keys-only index no write).
                listing = items.session_listing_keys(session.tenant, thread, session.session_uuid)
                session_write = update(
                    keys.key(pk, keys.SESSION_SK),
                    "SET next_seq = :next, buffered = :after, gsi4pk = :listing, gsi4sk = :listed",
                    {
                        ":seq": items.n(seq),
                        ":next": items.n(seq + 1),
                        ":before": items.n(buffered),
                        ":after": items.n(buffered + 1),
                        ":listing": listing[keys.GSI4_PK],
                        ":listed": listing[keys.GSI4_SK],
                    },
                    condition="next_seq = :seq AND buffered = :before",
                )
            stored = turn.model_copy(update={"seq": seq, "status": TurnStatus.BUFFERED, "memory_id": None})
            item, chunks = items.turn_item(stored, thread)
            parts = [put(part) for part in items.part_items(item, chunks)]
            try:
                self.table.transact([session_write, put(item, _NOT_THERE, return_old=True), *parts])
                return ConsolidateOutcome(
                    created=True, buffered_count=buffered + 1, session_created=current is None
                )
            except TransactionCancelled as cancelled:
                if cancelled.failed(1):
                    return self._replayed(session, turn, cancelled.old_item(1))
                backoff(attempt)  # the session moved under us (or a transaction conflict): read again
        raise Unavailable(
            f"Session {session.session_uuid} is receiving too many concurrent turns; retry this one shortly."
        )

    def _replayed(self, session: Session, turn: Turn, old: items.Item | None) -> ConsolidateOutcome:
        """The dialog uuid is taken: an idempotent replay, a conflict, or a fork still writing."""
        pk = keys.session_pk(session.tenant, session.session_uuid)
        old = old or self.table.get(pk, keys.turn_sk(turn.dialog_uuid))
        current = self.table.get(pk, keys.SESSION_SK)
        if old is None:
            raise Unavailable(f"Session {session.session_uuid} changed during this write; retry it.")
        if current is None:
            # Only a fork writes turns before their session item (its commit marker).
            raise Conflict(
                f"Session {session.session_uuid} is being created by a fork right now; retry in a moment.",
                [{"field": "session_uuid", "message": "being created by a fork"}],
            )
        existing = reads.turns(self.table, [old])[0]
        if not existing.same_content(turn):
            raise Conflict(
                f"new_dialog.uuid {turn.dialog_uuid} was already used in session {session.session_uuid} "
                "for other content. Give every new turn its own uuid; a retry must resend the same query, "
                "answer, user_name and npc_id.",
                [{"field": "new_dialog.uuid", "message": "already used for other content"}],
            )
        return ConsolidateOutcome(created=False, buffered_count=items.number(current, "buffered"))

    def list_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        found = reads.turns(self.table, reads.session_turn_items(self.table, tenant, session_uuid))
        return sorted(found, key=lambda turn: turn.seq)

    def buffered_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        # lsi1 holds exactly the buffered turns in seq order, and a local index reads consistently:
        # the worker must see the turn whose consolidate queued it.
        found = self.table.query(
            IndexName=keys.LSI1,
            KeyConditionExpression="pk = :pk AND begins_with(lsi1sk, :buffered)",
            ExpressionAttributeValues={
                ":pk": items.s(keys.session_pk(tenant, session_uuid)),
                ":buffered": items.s(keys.BUFFERED_PREFIX),
            },
            ConsistentRead=True,
        )
        return reads.turns(self.table, found)

    def buffered_turns_in_threads(self, tenant: str, threads: Sequence[str]) -> list[Turn]:
        found: list[items.Item] = []
        for thread in dict.fromkeys(threads):
            found.extend(
                self.table.query(
                    IndexName=keys.GSI1,
                    KeyConditionExpression="gsi1pk = :thread",
                    ExpressionAttributeValues={":thread": items.s(keys.thread_pk(tenant, thread))},
                )
            )
        turns = reads.turns(self.table, found)
        return sorted(turns, key=lambda turn: (turn.session_uuid, turn.seq))

    def save_turn_vectors(self, tenant: str, session_uuid: str, vectors: Mapping[str, list[float]]) -> int:
        # One small UpdateItem per turn (a buffered turn's gsi1 copy carries the vector, so
        # retrieve reads it with the turn); a turn deleted meanwhile fails its condition, skipped.
        pk = keys.session_pk(tenant, session_uuid)
        return sum(
            self.table.update_existing(
                keys.key(pk, keys.turn_sk(dialog_uuid)),
                "SET embedding = :vector",
                {":vector": items.b(pack_vector(vector))},
            )
            for dialog_uuid, vector in vectors.items()
        )

    def oldest_buffered(self) -> list[tuple[str, str, datetime]]:
        return lifecycle.oldest_buffered(self.table)

    def full_buffers(self, at_least: int) -> list[tuple[str, str]]:
        # gsi1 is sparse (buffered turns only), so the scan reads what waits, not the table. The
        # session is what follows the tenant's part of the turn's pk (taken as it is).
        counts: Counter[tuple[str, str]] = Counter()
        for item in self.table.scan(
            IndexName=keys.GSI1,
            ProjectionExpression="pk, #tenant",
            ExpressionAttributeNames={"#tenant": "tenant"},
        ):
            tenant = items.required(item, "tenant")
            session_uuid = items.required(item, "pk").removeprefix(keys.session_pk(tenant, ""))
            counts[(tenant, session_uuid)] += 1
        return sorted(session for session, count in counts.items() if count >= at_least)

    # -- memories ----------------------------------------------------------------------------

    def save_memory(self, memory: Memory) -> bool:
        memory = memory.retained(self.get_retention(memory.tenant))
        sources = sorted(set(memory.source_dialog_uuids))
        item, chunks = items.memory_item(memory)
        actions = [put(item, _NOT_THERE), *(put(part) for part in items.part_items(item, chunks))]
        if memory.session_uuid:
            # A memory-bank fact has no session: no reference, so a tenant's facts never pile up
            # in one partition (the session "" one) that every fact write would have to hit.
            actions.append(put(items.memref_item(memory)))
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
                self.table.transact(actions)
                return True
            except TransactionCancelled as cancelled:
                if cancelled.any_failed():
                    return False  # a turn already claimed or gone, or the id taken: write nothing
                backoff(attempt)
        raise Unavailable(f"Could not save memory {memory.memory_id} under contention; the job will retry.")

    def get_memory(self, tenant: str, memory_id: str) -> Memory | None:
        item = self.table.get(keys.memory_pk(tenant, memory_id), keys.MEMORY_SK)
        found = [] if item is None else self._live(reads.memories(self.table, [item]))
        return found[0] if found else None

    def get_memories(
        self, tenant: str, memory_ids: Sequence[str], *, vectors: bool = True
    ) -> dict[str, Memory]:
        wanted = list(dict.fromkeys(memory_ids))
        # Without vectors the items still carry them (one BatchGetItem either way); they are
        # just not decoded.
        found = (
            reads.memories(self.table, reads.memory_items(self.table, tenant, wanted), vectors=vectors)
            if wanted
            else []
        )
        return {memory.memory_id: memory for memory in self._live(found)}

    def list_memories(self, tenant: str, session_uuid: str) -> list[Memory]:
        refs = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={
                ":pk": items.s(keys.session_pk(tenant, session_uuid)),
                ":prefix": items.s(keys.MEMREF_PREFIX),
            },
            ConsistentRead=True,
        )
        order = [items.text(ref, "memory_id") or "" for ref in refs]
        found = {
            m.memory_id: m
            for m in self._live(reads.memories(self.table, reads.memory_items(self.table, tenant, order)))
        }
        return [found[memory_id] for memory_id in order if memory_id in found]

    def iter_memories(self, tenant: str | None = None) -> Iterator[Memory]:
        # gsi2 lists memory keys only; each page is fetched whole (consistently) in one batch.
        if tenant is None:
            pages = self.table.scan(IndexName=keys.GSI2)
        else:
            pages = self.table.query(
                IndexName=keys.GSI2,
                KeyConditionExpression="gsi2pk = :tenant",
                ExpressionAttributeValues={":tenant": items.s(keys.tenant_memories(tenant))},
            )
        page: list[items.Item] = []
        for found in pages:
            page.append(found)
            if len(page) == _PAGE:
                yield from self._live(reads.memories(self.table, self.table.batch_get(reads.keys_of(page))))
                page = []
        if page:
            yield from self._live(reads.memories(self.table, self.table.batch_get(reads.keys_of(page))))

    def list_thread_memories(
        self, tenant: str, thread: str, after: str | None = None, limit: int = 100
    ) -> list[Memory]:
        if limit <= 0:
            return []
        # gsi3 lists a thread's memory keys in id order; the items are then read consistently, so
        # a memory deleted since the index saw it is skipped and the page filled from further on.
        condition, values = "gsi3pk = :thread", {":thread": items.s(keys.thread_pk(tenant, thread))}
        if after:
            condition, values[":after"] = condition + " AND gsi3sk > :after", items.s(after)
        listed = self.table.query(
            IndexName=keys.GSI3,
            KeyConditionExpression=condition,
            ExpressionAttributeValues=values,
            Limit=limit,
        )
        page: list[Memory] = []
        while len(page) < limit and (wanted := list(islice(listed, limit - len(page)))):
            found = self._live(reads.memories(self.table, self.table.batch_get(reads.keys_of(wanted))))
            page += sorted(found, key=lambda memory: memory.memory_id)
        return page

    def memories_after(self, tenant: str, after: str | None, limit: int) -> list[Memory]:
        return lifecycle.memories_after(self.table, tenant, after, limit, self._live)

    def expired_memories(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        return lifecycle.expired_memories(self.table, now, limit)

    def update_memory(self, memory: Memory) -> bool:
        pk = keys.memory_pk(memory.tenant, memory.memory_id)
        for attempt in range(MAX_ATTEMPTS):
            found = self.table.get(pk, keys.MEMORY_SK)
            if found is None:
                return False
            stored = reads.memories(self.table, [found])[0]
            kept = memory.model_copy(update={name: getattr(stored, name) for name in _IDENTITY})
            item, chunks = items.memory_item(kept)
            # Put only over the item just read: same part count, so the parts left over are known.
            old_parts = items.part_count(found)
            condition = "attribute_exists(pk) AND " + (
                "parts = :parts" if old_parts else "attribute_not_exists(parts)"
            )
            actions = [put(item, condition, {":parts": items.n(old_parts)} if old_parts else None)]
            actions += [put(part) for part in items.part_items(item, chunks)]
            actions += [delete(part) for part in items.part_keys(found)[len(chunks) :]]
            try:
                self.table.transact(actions)
                return True
            except TransactionCancelled:
                backoff(attempt)  # deleted or rewritten meanwhile: read it again
        raise Unavailable(f"Memory {memory.memory_id} kept changing while being updated; retry shortly.")

    # -- removal and fork --------------------------------------------------------------------

    def delete_session(self, tenant: str, session_uuid: str) -> RemovalOutcome:
        return delete_session(self.table, tenant, session_uuid)

    def delete_memory(self, tenant: str, memory_id: str) -> RemovalOutcome:
        return delete_memory(self.table, tenant, memory_id)

    def delete_dialog(self, tenant: str, session_uuid: str, dialog_uuid: str) -> RemovalOutcome:
        return delete_dialog(self.table, tenant, session_uuid, dialog_uuid)

    def create_fork(self, plan: ForkPlan) -> None:
        days = self.get_retention(plan.target.tenant)
        write_fork(
            self.table, plan.model_copy(update={"memories": [m.retained(days) for m in plan.memories]})
        )

    # -- a tenant's retention -----------------------------------------------------------------

    def get_retention(self, tenant: str) -> int | None:
        return lifecycle.get_retention(self.table, tenant)

    def set_retention(self, tenant: str, days: int | None) -> None:
        lifecycle.set_retention(self.table, tenant, days)

    # -- the thread's character registry ------------------------------------------------------

    def get_characters(self, tenant: str, thread: str) -> dict[str, list[str]]:
        item = self.table.get(keys.thread_pk(tenant, thread), keys.CHARACTERS_SK)
        if item is None:
            return {}
        registry: dict[str, list[str]] = json.loads(items.unpack(item, ["registry"])["registry"])
        return registry

    def save_characters(self, tenant: str, thread: str, registry: dict[str, list[str]]) -> None:
        base = {**keys.key(keys.thread_pk(tenant, thread), keys.CHARACTERS_SK), "kind": items.s("characters")}
        item, chunks = items.pack(base, {"registry": json.dumps(registry, ensure_ascii=False)})
        if chunks:
            raise InvalidInput(f"The character registry of thread {thread} is over 300 KB compressed.")
        self.table.put(item)
