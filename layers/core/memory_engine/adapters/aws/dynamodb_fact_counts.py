"""Each memory-bank scope's count of facts, kept as facts are written and removed.

A scope holding facts has one count item, `FACTS` in its thread's partition, with its count, its
scope and sparse `gsi4` keys (`T#<tenant>#FACTSCOPES`, by thread). The item is written in the same
TransactWriteItems call as each fact put (`save_memory`: ADD one) and each fact delete
(`delete_memory`, which the user's delete, forget-user and the expiry sweep all go through: ADD
minus one, or the item's delete with the last fact). So the inspector's page of scopes reads one
keys-only Query and one BatchGetItem of as many count items as it shows, however many facts each
scope holds.

Facts carry no TTL attribute (`dynamodb_items.expiry_attributes`): DynamoDB's own expiry would
delete a fact outside any transaction and leave its scope's count one too high for good. An
expired fact is hidden from reads at once and counted until the sweep removes it (every 15
minutes). `backfill_fact_counts` counts the facts of a table written before the counts existed.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import islice

from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_reads as reads
from memory_engine.adapters.aws.dynamodb_table import Action, DynamoTable, Item, delete, update
from memory_engine.models.domain import THREAD_SCOPE_KEY, Memory
from memory_engine.ports import FactScope


def counted(memory: Memory) -> bool:
    """A memory-bank fact: what a scope's count counts."""
    return memory.is_fact and not memory.session_uuid


def count_key(tenant: str, thread: str) -> Item:
    return keys.key(keys.thread_pk(tenant, thread), keys.FACT_COUNT_SK)


def count_item(tenant: str, thread: str, scope: dict[str, str], facts: int) -> Item:
    """A scope's count item as a whole (what the backfill writes; the writes only ADD to it)."""
    return {
        **count_key(tenant, thread),
        "kind": items.s("fact_count"),
        "thread": items.s(thread),
        "scope": items.s(json.dumps(scope, ensure_ascii=False)),
        "facts": items.n(facts),
        keys.GSI4_PK: items.s(keys.tenant_fact_scopes(tenant)),
        keys.GSI4_SK: items.s(keys.fact_scope_listing_sk(thread)),
    }


def added(memory: Memory) -> Action:
    """One more fact in the memory's scope: the count item is created with the scope's first fact."""
    return update(
        count_key(memory.tenant, memory.parent_session_uuid),
        "SET #kind = :kind, #scope = if_not_exists(#scope, :scope), thread = :thread, gsi4pk = :listing,"
        " gsi4sk = :listed ADD facts :one",
        {
            ":kind": items.s("fact_count"),
            ":scope": items.s(json.dumps(memory.visible_scope, ensure_ascii=False)),
            ":thread": items.s(memory.parent_session_uuid),
            ":listing": items.s(keys.tenant_fact_scopes(memory.tenant)),
            ":listed": items.s(keys.fact_scope_listing_sk(memory.parent_session_uuid)),
            ":one": items.n(1),
        },
        names={"#kind": "kind", "#scope": "scope"},
    )


def removed(table: DynamoTable, memory: Memory) -> list[Action]:
    """One fact fewer in the memory's scope, under a condition on the count just read (a
    concurrent fact write cancels the transaction, which the caller reads again and retries);
    the last fact takes the count item with it. Nothing for a scope never counted (a table
    written before the counts, until `backfill_fact_counts` runs)."""
    key = count_key(memory.tenant, memory.parent_session_uuid)
    found = table.get(key[keys.PK]["S"], keys.FACT_COUNT_SK)
    if found is None:
        return []
    facts = items.number(found, "facts")
    if facts <= 1:
        return [delete(key, condition="facts = :facts", values={":facts": items.n(facts)})]
    return [
        update(
            key,
            "ADD facts :minus",
            {":minus": items.n(-1), ":facts": items.n(facts)},
            condition="facts = :facts",
        )
    ]


def fact_scopes(
    table: DynamoTable, tenant: str, after: str | None = None, limit: int = 100
) -> list[FactScope]:
    """The tenant's fact scopes in listing order after the thread `after`, at most `limit`: one
    keys-only Query of as many count items, then the items (consistently)."""
    if limit <= 0:
        return []
    condition, values = "gsi4pk = :scopes", {":scopes": items.s(keys.tenant_fact_scopes(tenant))}
    if after is not None:
        condition += " AND gsi4sk > :after"
        values[":after"] = items.s(keys.fact_scope_listing_sk(after))
    listed = list(
        islice(
            table.query(
                IndexName=keys.GSI4,
                KeyConditionExpression=condition,
                ExpressionAttributeValues=values,
                Limit=limit,
            ),
            limit,  # one request: the pages after it are never asked for
        )
    )
    # A count item deleted since the index saw it (its scope's last fact went) is not found.
    found = {items.required(item, "thread"): item for item in table.batch_get(reads.keys_of(listed))}
    return [
        FactScope(
            thread,
            json.loads(items.text(item, "scope") or "{}") or {THREAD_SCOPE_KEY: thread},
            items.number(item, "facts"),
        )
        for thread, item in sorted(found.items(), key=lambda pair: keys.fact_scope_listing_sk(pair[0]))
    ]


def backfill_fact_counts(table: DynamoTable) -> int:
    """Count the facts of a table written before the counts existed (run after
    `backfill_fact_listing`: it counts the listed facts), and take the TTL attribute off each
    fact (see the module's docstring); returns how many scopes were counted. One Scan of the
    table, for this one-off upgrade only. Each count is set to what the Scan found, so a fact
    written or deleted during the run can leave a count off by one: run it again, at a quiet
    time, to set it right."""
    counts: Counter[tuple[str, str]] = Counter()
    first: dict[tuple[str, str], Item] = {}
    for item in table.scan(
        FilterExpression="sk = :memory AND session_uuid = :none AND attribute_exists(gsi4pk)",
        ProjectionExpression="pk, sk, tenant, parent_session_uuid, parts, #ttl",
        ExpressionAttributeValues={":memory": items.s(keys.MEMORY_SK), ":none": items.s("")},
        ExpressionAttributeNames={"#ttl": keys.TTL_ATTRIBUTE},
    ):
        where = (items.required(item, "tenant"), items.text(item, "parent_session_uuid") or "")
        counts[where] += 1
        first.setdefault(where, item)
        if keys.TTL_ATTRIBUTE in item:  # its overflow parts carry the owner's TTL too
            for key in [*reads.keys_of([item]), *items.part_keys(item)]:
                table.update_existing(key, "REMOVE #ttl", names={"#ttl": keys.TTL_ATTRIBUTE})
    for (tenant, thread), facts in counts.items():
        found = reads.memories(
            table, table.batch_get(reads.keys_of([first[(tenant, thread)]])), vectors=False
        )
        scope = found[0].visible_scope if found else {THREAD_SCOPE_KEY: thread}
        table.put(count_item(tenant, thread, scope, facts))
    return len(counts)
