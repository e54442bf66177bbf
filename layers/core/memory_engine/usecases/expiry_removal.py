"""The removal of expired memories from their record (`delete_intents.begin_expiry`): run by the
sweep's expiry, and again by the finisher (`unfinished_deletes`) for one a process left half-done.
Its own module: both of those import it, and the sweep imports the finisher.
"""

from __future__ import annotations

from contextlib import suppress

from memory_engine.engine import Engine
from memory_engine.errors import NotFound
from memory_engine.models.deletes import DeleteIntent
from memory_engine.models.domain import Memory
from memory_engine.ports import RemovalOutcome
from memory_engine.usecases import facts, index_purge, removed_facts, retention


def expire_recorded(engine: Engine, intent: DeleteIntent, read: dict[str, Memory]) -> int:
    """The removal of the expired memories `intent` recorded (`read`: those of them still stored,
    read before any change), then the record ended; returns the raw turns the tenant's retention
    removed. In a delete's order, each step harmless run again, so the sweep finishes a run that
    died half-way from its record (`unfinished_deletes.finish`): what the memories' own contents
    reopen first, while they are stored (the facts a merge retired for an expired fact, the key
    facts an extractor named as replaced by one); then the removals; then their documents purged,
    their statements taken out of their threads' records (by session, from the record) and,
    under a retention, the raw turns they were made of removed (from the record too)."""
    tenant, memories = intent.tenant, list(read.values())
    facts.reopen_replaced(engine, memories)  # an expired fact's: the facts retired for it
    removed_facts.unname_ahead(engine, memories)
    outcomes: list[RemovalOutcome] = []
    for memory_id in intent.memory_ids:
        # Deleted meanwhile (a user's delete, another sweep): its index purge still runs.
        with suppress(NotFound):
            outcomes.append(engine.store.delete_memory(tenant, memory_id))
    index_purge.delete(engine, tenant, intent.memory_ids)
    # What an expired memory's statements had replaced is reopened (`removed_facts`), by its session.
    by_session: dict[str, list[str]] = {}
    for memory_id, session_uuid in intent.sessions.items():
        by_session.setdefault(session_uuid, []).append(memory_id)
    removed_facts.forget_in_sessions(engine, tenant, by_session, [m for o in outcomes for m in o.removed])
    # Under a tenant's retention the raw turns go too, once their memory (and its documents) went.
    left = [
        RemovalOutcome(session_uuid=session_uuid, forgotten_dialogs=dialogs)
        for session_uuid, dialogs in intent.dialogs.items()
    ]
    turns = retention.forget_turns(engine, tenant, left)
    engine.store.end_delete(intent)
    return turns
