"""`Store` on one DynamoDB table (single-table design: docs/dynamodb.md).

The class is the port's face; every write the engine's guarantees rest on is one conditional
TransactWriteItems call, each in the module of its records: `dynamodb_turns` (consolidate, turn
reads), `dynamodb_memory_writes` (save and update a memory), `dynamodb_removal` (deletes of a
memory, a dialog, a whole session), `dynamodb_fork`, `dynamodb_sessions` (listings),
`dynamodb_fact_counts` (each scope's count of facts), `dynamodb_lifecycle` (expiry,
retention) and `dynamodb_deletes` (deletes in flight). Memory reads, the character registry and
the statements record are here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from itertools import islice

from memory_engine.adapters.aws import dynamodb_deletes as deletes
from memory_engine.adapters.aws import dynamodb_fact_counts as fact_counts
from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_lifecycle as lifecycle
from memory_engine.adapters.aws import dynamodb_memory_writes as writes
from memory_engine.adapters.aws import dynamodb_reads as reads
from memory_engine.adapters.aws import dynamodb_turns as turns
from memory_engine.adapters.aws.dynamodb_fork import write_fork
from memory_engine.adapters.aws.dynamodb_removal import delete_dialog, delete_memory, delete_session
from memory_engine.adapters.aws.dynamodb_sessions import (
    backfill_fact_listing,
    backfill_session_listing,
    list_sessions,
    sessions_after,
    thread_has_sessions,
)
from memory_engine.adapters.aws.dynamodb_table import DynamoTable
from memory_engine.errors import InvalidInput
from memory_engine.models.deletes import DeleteIntent
from memory_engine.models.domain import Memory, Session, Turn
from memory_engine.models.life import MemoryLife
from memory_engine.models.statements import ThreadStatements
from memory_engine.ports import Buffer, Clock, ConsolidateOutcome, FactScope, ForkPlan, RemovalOutcome
from memory_engine.ports.clock import SystemClock

_PAGE = 100


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

    def thread_has_sessions(self, tenant: str, thread: str) -> bool:
        return thread_has_sessions(self.table, tenant, thread)

    def fact_scopes(self, tenant: str, after: str | None = None, limit: int = 100) -> list[FactScope]:
        return fact_counts.fact_scopes(self.table, tenant, after, limit)

    def sessions_after(self, tenant: str, after: tuple[str, str] | None, limit: int) -> list[Session]:
        return sessions_after(self.table, tenant, after, limit)

    def backfill_session_listing(self) -> int:
        """List the sessions written before the listing index existed (`dynamodb_sessions`)."""
        return backfill_session_listing(self.table)

    def backfill_fact_listing(self) -> int:
        """List the facts written before their listing existed (`dynamodb_sessions`)."""
        return backfill_fact_listing(self.table)

    def backfill_fact_counts(self) -> int:
        """Count the facts written before the scopes' counts existed (`dynamodb_fact_counts`)."""
        return fact_counts.backfill_fact_counts(self.table)

    def append_turn(self, session: Session, turn: Turn) -> ConsolidateOutcome:
        return turns.append_turn(self.table, session, turn)

    def list_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        return turns.list_turns(self.table, tenant, session_uuid)

    def get_turn(self, tenant: str, session_uuid: str, dialog_uuid: str) -> Turn | None:
        return turns.get_turn(self.table, tenant, session_uuid, dialog_uuid)

    def buffered_turns(self, tenant: str, session_uuid: str) -> list[Turn]:
        return turns.buffered_turns(self.table, tenant, session_uuid)

    def buffered_turns_in_threads(self, tenant: str, threads: Sequence[str]) -> list[Turn]:
        return turns.buffered_turns_in_threads(self.table, tenant, threads)

    def save_turn_vectors(self, tenant: str, session_uuid: str, vectors: Mapping[str, list[float]]) -> int:
        return turns.save_turn_vectors(self.table, tenant, session_uuid, vectors)

    def buffers(self) -> list[Buffer]:
        return turns.buffers(self.table)

    # -- memories ----------------------------------------------------------------------------

    def save_memory(self, memory: Memory) -> bool:
        return writes.save_memory(self.table, memory, self.get_retention(memory.tenant))

    def get_memory(self, tenant: str, memory_id: str) -> Memory | None:
        item = self.table.get(keys.memory_pk(tenant, memory_id), keys.MEMORY_SK)
        found = [] if item is None else self._live(reads.memories(self.table, [item]))
        return found[0] if found else None

    def get_memories(
        self, tenant: str, memory_ids: Sequence[str], *, vectors: bool = True, expired: bool = False
    ) -> dict[str, Memory]:
        wanted = list(dict.fromkeys(memory_ids))
        # Without vectors the items still carry them (one BatchGetItem either way); they are
        # just not decoded.
        found = (
            reads.memories(self.table, reads.memory_items(self.table, tenant, wanted), vectors=vectors)
            if wanted
            else []
        )
        return {memory.memory_id: memory for memory in (found if expired else self._live(found))}

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

    def latest_thread_memories(self, tenant: str, thread: str, limit: int) -> list[Memory]:
        if limit <= 0:
            return []
        # gsi3 backwards: the newest keys first; a memory deleted since is skipped and the page
        # filled from further back, as for the pages above.
        listed = self.table.query(
            IndexName=keys.GSI3,
            KeyConditionExpression="gsi3pk = :thread",
            ExpressionAttributeValues={":thread": items.s(keys.thread_pk(tenant, thread))},
            ScanIndexForward=False,
            Limit=limit,
        )
        page: list[Memory] = []
        while len(page) < limit and (wanted := list(islice(listed, limit - len(page)))):
            found = self._live(reads.memories(self.table, self.table.batch_get(reads.keys_of(wanted))))
            page += sorted(found, key=lambda memory: memory.memory_id, reverse=True)
        return page

    def memories_after(self, tenant: str, after: str | None, limit: int) -> list[Memory]:
        return lifecycle.memories_after(self.table, tenant, after, limit, self._live)

    def expired_memories(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        return lifecycle.expired_memories(self.table, now, limit)

    def update_memory(self, memory: Memory, *, expected_life: MemoryLife | None = None) -> bool:
        return writes.update_memory(self.table, memory, expected_life)

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

    # -- deletes in flight ---------------------------------------------------------------------

    def begin_delete(self, intent: DeleteIntent) -> None:
        deletes.begin(self.table, intent)

    def end_delete(self, intent: DeleteIntent) -> None:
        deletes.end(self.table, intent)

    def deletes_begun(self, before: datetime, limit: int) -> list[DeleteIntent]:
        return deletes.begun_before(self.table, before, limit)

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

    def forget_thread_records(self, tenant: str, thread: str) -> None:
        for sk in (keys.CHARACTERS_SK, keys.STATEMENTS_SK):  # neither is ever split into parts
            self.table.delete(keys.key(keys.thread_pk(tenant, thread), sk))

    # -- the thread's statements record (supersession) ---------------------------------------

    def get_statements(self, tenant: str, thread: str) -> ThreadStatements | None:
        item = self.table.get(keys.thread_pk(tenant, thread), keys.STATEMENTS_SK)
        if item is None:
            return None
        record = ThreadStatements.model_validate_json(items.unpack(item, ["record"])["record"])
        return record.model_copy(update={"version": items.number(item, "version")})

    def save_statements(self, record: ThreadStatements) -> bool:
        base = {
            **keys.key(keys.thread_pk(record.tenant, record.thread), keys.STATEMENTS_SK),
            "kind": items.s("statements"),
            "version": items.n(record.version + 1),
        }
        item, chunks = items.pack(base, {"record": record.model_dump_json(exclude={"version"})})
        if chunks:  # MAX_STATEMENTS keeps it far below: some 30 KB compressed at the bound
            raise InvalidInput(f"The statements record of thread {record.thread} is over 300 KB compressed.")
        if record.version == 0:
            return self.table.put_if(item, "attribute_not_exists(pk)")
        return self.table.put_if(item, "version = :version", {":version": items.n(record.version)})
