"""Sessions' turns on the table: the consolidate write (optimistic on the session item) and turn reads.

consolidate: the turn is put only if its dialog uuid is new, and the session's `next_seq` and
`buffered` counter move only from the values just read (retried), so seqs are consecutive and the
buffer count exact: one conditional TransactWriteItems call per turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime

from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_reads as reads
from memory_engine.adapters.aws.dynamodb_table import DynamoTable, TransactionCancelled, backoff, put, update
from memory_engine.adapters.encoding import pack_vector
from memory_engine.errors import Conflict, InvalidInput, Unavailable
from memory_engine.models.domain import Session, Turn, TurnStatus, check_thread
from memory_engine.ports import Buffer, ConsolidateOutcome

MAX_ATTEMPTS = 12  # optimistic retries of one write under contention before answering 503
NOT_THERE = "attribute_not_exists(pk)"


def append_turn(table: DynamoTable, session: Session, turn: Turn) -> ConsolidateOutcome:
    if (turn.tenant, turn.session_uuid) != (session.tenant, session.session_uuid):
        raise InvalidInput(
            f"Turn {turn.dialog_uuid} names session {turn.session_uuid} of tenant {turn.tenant}, "
            f"but is appended to session {session.session_uuid} of tenant {session.tenant}."
        )
    pk = keys.session_pk(session.tenant, session.session_uuid)
    for attempt in range(MAX_ATTEMPTS):
        current = table.get(pk, keys.SESSION_SK)
        if current is None:
            seq, buffered, thread = session.next_seq, 0, session.parent_session_uuid
            session_write = put(items.session_item(session, seq + 1, 1), NOT_THERE)
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
            table.transact([session_write, put(item, NOT_THERE, return_old=True), *parts])
            return ConsolidateOutcome(
                created=True, buffered_count=buffered + 1, session_created=current is None
            )
        except TransactionCancelled as cancelled:
            if cancelled.failed(1):
                return _replayed(table, session, turn, cancelled.old_item(1))
            backoff(attempt)  # the session moved under us (or a transaction conflict): read again
    raise Unavailable(
        f"Session {session.session_uuid} is receiving too many concurrent turns; retry this one shortly."
    )


def _replayed(table: DynamoTable, session: Session, turn: Turn, old: items.Item | None) -> ConsolidateOutcome:
    """The dialog uuid is taken: an idempotent replay, a conflict, or a fork still writing."""
    pk = keys.session_pk(session.tenant, session.session_uuid)
    old = old or table.get(pk, keys.turn_sk(turn.dialog_uuid))
    current = table.get(pk, keys.SESSION_SK)
    if old is None:
        raise Unavailable(f"Session {session.session_uuid} changed during this write; retry it.")
    if current is None:
        # Only a fork writes turns before their session item (its commit marker).
        raise Conflict(
            f"Session {session.session_uuid} is being created by a fork right now; retry in a moment.",
            [{"field": "session_uuid", "message": "being created by a fork"}],
        )
    existing = reads.turns(table, [old])[0]
    if not existing.same_content(turn):
        raise Conflict(
            f"new_dialog.uuid {turn.dialog_uuid} was already used in session {session.session_uuid} "
            "for other content. Give every new turn its own uuid; a retry must resend the same query, "
            "answer, user_name and npc_id.",
            [{"field": "new_dialog.uuid", "message": "already used for other content"}],
        )
    return ConsolidateOutcome(created=False, buffered_count=items.number(current, "buffered"))


def list_turns(table: DynamoTable, tenant: str, session_uuid: str) -> list[Turn]:
    found = reads.turns(table, reads.session_turn_items(table, tenant, session_uuid))
    return sorted(found, key=lambda turn: turn.seq)


def get_turn(table: DynamoTable, tenant: str, session_uuid: str, dialog_uuid: str) -> Turn | None:
    found = table.get(keys.session_pk(tenant, session_uuid), keys.turn_sk(dialog_uuid))
    return None if found is None else reads.turns(table, [found])[0]


def buffered_turns(table: DynamoTable, tenant: str, session_uuid: str) -> list[Turn]:
    # lsi1 holds exactly the buffered turns in seq order, and a local index reads consistently:
    # the worker must see the turn whose consolidate queued it.
    found = table.query(
        IndexName=keys.LSI1,
        KeyConditionExpression="pk = :pk AND begins_with(lsi1sk, :buffered)",
        ExpressionAttributeValues={
            ":pk": items.s(keys.session_pk(tenant, session_uuid)),
            ":buffered": items.s(keys.BUFFERED_PREFIX),
        },
        ConsistentRead=True,
    )
    return reads.turns(table, found)


def buffered_turns_in_threads(table: DynamoTable, tenant: str, threads: Sequence[str]) -> list[Turn]:
    found: list[items.Item] = []
    for thread in dict.fromkeys(threads):
        found.extend(
            table.query(
                IndexName=keys.GSI1,
                KeyConditionExpression="gsi1pk = :thread",
                ExpressionAttributeValues={":thread": items.s(keys.thread_pk(tenant, thread))},
            )
        )
    turns = reads.turns(table, found)
    return sorted(turns, key=lambda turn: (turn.session_uuid, turn.seq))


def save_turn_vectors(
    table: DynamoTable, tenant: str, session_uuid: str, vectors: Mapping[str, list[float]]
) -> int:
    # One small UpdateItem per turn (a buffered turn's gsi1 copy carries the vector, so
    # retrieve reads it with the turn); a turn deleted meanwhile fails its condition, skipped.
    pk = keys.session_pk(tenant, session_uuid)
    return sum(
        table.update_existing(
            keys.key(pk, keys.turn_sk(dialog_uuid)),
            "SET embedding = :vector",
            {":vector": items.b(pack_vector(vector))},
        )
        for dialog_uuid, vector in vectors.items()
    )


def buffers(table: DynamoTable) -> list[Buffer]:
    """`Store.buffers`: one scan of gsi1, which is sparse (buffered turns only), so it reads what
    waits, not the table; each turn gives its session a count and, maybe, its oldest arrival."""
    counts: Counter[tuple[str, str]] = Counter()
    oldest: dict[tuple[str, str], str] = {}
    for item in table.scan(
        IndexName=keys.GSI1,
        ProjectionExpression="pk, #tenant, created_at",
        ExpressionAttributeNames={"#tenant": "tenant"},
    ):
        tenant = items.required(item, "tenant")
        # The session is what follows the tenant's part of the turn's pk (taken as it is).
        session = (tenant, items.required(item, "pk").removeprefix(keys.session_pk(tenant, "")))
        arrived = items.required(item, "created_at")  # fixed-width UTC text: sorts as time
        counts[session] += 1
        oldest[session] = min(oldest.get(session, arrived), arrived)
    return [
        Buffer(tenant, session_uuid, count, datetime.fromisoformat(oldest[tenant, session_uuid]))
        for (tenant, session_uuid), count in sorted(counts.items())
    ]
