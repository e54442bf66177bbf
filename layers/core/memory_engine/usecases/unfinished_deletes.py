"""The deletes a process left half-done (`delete_intents`), finished by the sweep: each delete
begun more than STALE_AFTER ago, at most DELETES_PER_SWEEP a run, oldest first. Finishing is
running the delete again; when what it named is gone already (a 404), what the removal left is
done from the record: the statements of its memories that are no longer stored taken out of the
thread's record (what they replaced reopened), their documents purged from the index, and the
thread's own records forgotten when it has no session left (`thread_records`).

Forgetting a chat user is finished by running it again (`forget_user.finish`): it lists what is
still stored of the user, USER_PAGES_PER_FINISH pages a sweep (the rest, begun anew, a later
one). The sweep's own removal of expired memories (their expiry or their tenant's retention, and
the raw turns the retention removes after them) is finished from its record
(`sweep.expire_recorded`): the memories it names, their sessions and their turns.

Its own module, apart from `delete_intents`: it runs the delete use cases, which record their
deletes through `delete_intents` (one module for both was an import cycle).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from memory_engine.engine import Engine
from memory_engine.errors import MemoryEngineError, NotFound
from memory_engine.models.api import DeleteRequest
from memory_engine.models.deletes import DeleteIntent
from memory_engine.ports import RemovalOutcome
from memory_engine.usecases import bank, delete, forget_user, index_purge, removed_facts, thread_records

log = logging.getLogger("memory_engine.sweep")

# A delete's record older than this is one whose process died: a delete takes well under a
# second, and a caller's retry, if any, comes within a minute.
STALE_AFTER = timedelta(minutes=5)
# Deletes finished per sweep: the rest wait for the next sweep (a few minutes).
DELETES_PER_SWEEP = 100
# Pages of a user's memories (500 each) one finish of a forget removes: the rest, a later sweep.
USER_PAGES_PER_FINISH = 2


def finish_begun(engine: Engine, limit: int = DELETES_PER_SWEEP) -> list[DeleteIntent]:
    """Finish up to `limit` deletes begun more than STALE_AFTER ago (`finish`); returns those
    finished. One that fails this time (the index unreachable, say) stays for the next sweep; a
    rerun that found what it named begins it anew, behind the others."""
    finished: list[DeleteIntent] = []
    for intent in engine.store.deletes_begun(engine.clock.now() - STALE_AFTER, limit):
        try:
            ended = finish(engine, intent)
        except MemoryEngineError as error:
            log.warning("sweep could not finish a delete begun at %s: %s", intent.begun, error.message)
            continue
        if ended:
            finished.append(intent)
    if finished:
        log.info("sweep finished %d deletes a process had left begun", len(finished))
    return finished


def finish(engine: Engine, intent: DeleteIntent) -> bool:
    """Run the delete again; when what it named is gone (404), do from the record what its
    removal leaves; then end the record. Run again, it changes nothing more. True once ended;
    False for a forget of a user with more memories left than one finish removes (its record
    begun anew: a later sweep goes on)."""
    from memory_engine.usecases import sweep  # here, not at import: the sweep imports this module

    if intent.route == "user":  # forgetting a user runs again: it lists what is left
        return forget_user.finish(engine, intent.tenant, intent.target, USER_PAGES_PER_FINISH)
    if intent.route == "expiry":  # from its record: what is still stored is read again
        stored = engine.store.get_memories(intent.tenant, intent.memory_ids, vectors=False, expired=True)
        sweep.expire_recorded(engine, intent, stored)
        return True
    try:
        if intent.route == "bank":
            bank.delete(engine, intent.tenant, intent.target)
        else:
            delete.run(
                engine,
                intent.tenant,
                DeleteRequest(session_uuid=intent.session_uuid, dialog_uuid=intent.target),
            )
    except NotFound:
        _after_removal(engine, intent)
    engine.store.end_delete(intent)
    return True


def _after_removal(engine: Engine, intent: DeleteIntent) -> None:
    tenant = intent.tenant
    stored = engine.store.get_memories(tenant, intent.memory_ids, vectors=False) if intent.memory_ids else {}
    gone = [memory_id for memory_id in intent.memory_ids if memory_id not in stored]
    if gone:
        removed_facts.forget(engine, tenant, intent.thread, gone)
        index_purge.delete(engine, tenant, gone)
    if (
        intent.route == "engine"
        and intent.thread
        and engine.store.get_session(tenant, intent.session_uuid) is None
    ):
        ended = RemovalOutcome(deleted_session=True, thread=intent.thread)
        thread_records.forget_ended(engine, tenant, [ended])
