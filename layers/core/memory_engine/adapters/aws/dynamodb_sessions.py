"""A tenant's sessions, listed by a Query of the sparse `gsi4` index, never a Scan of the table.

Every session item carries `gsi4pk = T#<tenant>#SESSIONS` and `gsi4sk = <thread>#<session>`
(`dynamodb_items.session_listing_keys`): the inspector reads one partition of a keys-only index,
then the session items themselves, consistently, a hundred at a time. Sessions written before the
index existed carry no such keys: `backfill_session_listing` gives them theirs (run once after the
upgrade, `memory-engine backfill-sessions`), and a session's next turn adds them too.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_reads as reads
from memory_engine.adapters.aws.dynamodb_table import DynamoTable
from memory_engine.models.domain import Session

_PAGE = 100  # keys per BatchGetItem


def list_sessions(
    table: DynamoTable, tenant: str, after: tuple[str, str] | None = None, limit: int | None = None
) -> list[Session]:
    """The tenant's sessions in listing order (by thread, then session uuid), after `after`, at
    most `limit`: one keys-only Query of as many keys, then the items."""
    condition, values = "gsi4pk = :tenant", {":tenant": items.s(keys.tenant_sessions(tenant))}
    if after:
        condition += " AND gsi4sk > :after"
        values[":after"] = items.s(keys.session_listing_sk(*after))
    bounded = {"Limit": limit} if limit else {}
    listed = islice(
        table.query(
            IndexName=keys.GSI4, KeyConditionExpression=condition, ExpressionAttributeValues=values, **bounded
        ),
        limit,
    )
    sessions: list[Session] = []
    while page := list(islice(listed, _PAGE)):
        # The index is eventually consistent; the items are read consistently, so a session
        # deleted since the index saw it is simply not found.
        found = {
            keys.session_listing_sk(s.parent_session_uuid, s.session_uuid): s
            for s in (items.session_from(item) for item in table.batch_get(reads.keys_of(page)))
        }
        sessions += [found[sk] for sk in sorted(found)]
    return sessions


def sessions_after(
    table: DynamoTable, tenant: str, after: tuple[str, str] | None, limit: int
) -> list[Session]:
    """Up to `limit` sessions of the tenant after `after` (thread, session), in gsi4 order."""
    if limit <= 0:
        return []
    condition, values = "gsi4pk = :tenant", {":tenant": items.s(keys.tenant_sessions(tenant))}
    if after is not None:
        condition += " AND gsi4sk > :after"
        values[":after"] = items.s(keys.session_listing_sk(*after))
    listed = table.query(
        IndexName=keys.GSI4, KeyConditionExpression=condition, ExpressionAttributeValues=values, Limit=limit
    )
    sessions: list[Session] = []
    # A session deleted since the index saw it is not found: the page is filled from further on,
    # so a short page is the last.
    while len(sessions) < limit and (wanted := list(islice(listed, limit - len(sessions)))):
        found = [items.session_from(item) for item in table.batch_get(reads.keys_of(wanted))]
        sessions += sorted(
            found, key=lambda s: keys.session_listing_sk(s.parent_session_uuid, s.session_uuid)
        )
    return sessions


# Keys of the listing read to tell whether a thread still has a session. Only sessions deleted an
# instant ago (still in the eventually consistent index) or of threads whose names continue this
# one's with a '#' come before one of the thread's own; past this many, the thread is taken to
# have one (its records are kept, never forgotten on a guess).
_THREAD_PROBE_KEYS = 100
_THREAD_PROBE_PAGE = 10


def thread_has_sessions(table: DynamoTable, tenant: str, thread: str) -> bool:
    """Whether a session of the thread is stored: a keys-only Query of gsi4 from the thread's
    first key, each listed session read back consistently (the index may still list one deleted
    an instant ago), stopping at the first that is the thread's."""
    listed = table.query(
        IndexName=keys.GSI4,
        KeyConditionExpression="gsi4pk = :tenant AND begins_with(gsi4sk, :thread)",
        ExpressionAttributeValues={
            ":tenant": items.s(keys.tenant_sessions(tenant)),
            ":thread": items.s(keys.session_listing_sk(thread, "")),
        },
        Limit=_THREAD_PROBE_PAGE,
    )
    probed = 0
    while page := list(islice(listed, _THREAD_PROBE_PAGE)):
        found = table.batch_get(reads.keys_of(page), ["parent_session_uuid"])
        if any(items.text(item, "parent_session_uuid") == thread for item in found):
            return True
        probed += len(page)
        if probed >= _THREAD_PROBE_KEYS:
            return True
    return False


def unlisted_sessions(table: DynamoTable) -> Iterator[items.Item]:
    """Session items without listing keys: those written before gsi4 existed (a Scan of the
    whole table, for the one-off backfill only; no function's role may Scan the table)."""
    yield from table.scan(
        FilterExpression="sk = :session AND attribute_not_exists(gsi4pk)",
        ProjectionExpression="pk, sk, tenant, session_uuid, parent_session_uuid",
        ExpressionAttributeValues={":session": items.s(keys.SESSION_SK)},
    )


def backfill_session_listing(table: DynamoTable) -> int:
    """Give every unlisted session its listing keys; returns how many were listed. Idempotent: a
    session listed meanwhile (by its next turn) is written the same keys again, one deleted
    meanwhile is skipped."""
    listed = 0
    for item in unlisted_sessions(table):
        listing = items.session_listing_keys(
            items.required(item, "tenant"),
            items.text(item, "parent_session_uuid") or "",
            items.required(item, "session_uuid"),
        )
        listed += table.update_existing(
            reads.keys_of([item])[0],
            "SET gsi4pk = :listing, gsi4sk = :listed",
            {":listing": listing[keys.GSI4_PK], ":listed": listing[keys.GSI4_SK]},
        )
    return listed


def backfill_fact_listing(table: DynamoTable) -> int:
    """Give every memory-bank fact written before the fact listing its listing keys (a fact belongs
    to no session); returns how many. One Scan of the table, for this one-off upgrade only;
    idempotent, and a fact deleted meanwhile is skipped."""
    listed = 0
    for item in table.scan(
        FilterExpression="sk = :memory AND session_uuid = :none AND attribute_not_exists(gsi4pk)",
        ProjectionExpression="pk, sk, tenant, memory_id, parent_session_uuid",
        ExpressionAttributeValues={":memory": items.s(keys.MEMORY_SK), ":none": items.s("")},
    ):
        listing = items.fact_listing_keys(
            items.required(item, "tenant"),
            items.text(item, "parent_session_uuid") or "",
            items.required(item, "memory_id"),
        )
        listed += table.update_existing(
            reads.keys_of([item])[0],
            "SET gsi4pk = :listing, gsi4sk = :listed",
            {":listing": listing[keys.GSI4_PK], ":listed": listing[keys.GSI4_SK]},
        )
    return listed
