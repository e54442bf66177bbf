"""A tenant's retention: how many days its memories (extracted ones and facts alike) and its raw
turns are kept.

The store stamps every memory it saves for the tenant with the expiry its retention gives
(`Store.set_retention`, `Memory.retained`), so the retention is one more expiry: no read returns
a memory past it, the sweep removes it with the cascade of a delete, and on AWS DynamoDB's TTL
backs the sweep up. Setting a retention also stamps the memories already stored, a page at a
time, so none outlives it.

Raw turns go through their memory, so a turn is never dropped without it: an extracted turn is
removed by the sweep with its memory (`forget_turns`, after the memory's removal left it as
forgotten history), and a buffered turn the retention has passed over is extracted first
(`extract_past_retention`: the sweep forces its session's extraction), then lives as long as the
memory made of it. A raw turn therefore goes at most `days` after its memory was written, which
is at most one sweep after the turn itself was `days` old.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import timedelta

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput, NotFound
from memory_engine.models.domain import TurnStatus
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import Buffer, RemovalOutcome, Store
from memory_engine.usecases import thread_records

log = logging.getLogger("memory_engine.sweep")

MAX_RETENTION_DAYS = 36_500
_PAGE = 200


def set_retention(
    store: Store, tenant: str, days: int | None, progress: Callable[[int], None] | None = None
) -> int:
    """Keep the tenant's memories `days` days (None: until deleted); returns how many stored
    memories got an earlier expiry from it."""
    if days is not None and not 1 <= days <= MAX_RETENTION_DAYS:
        raise InvalidInput(
            f"A retention is 1 to {MAX_RETENTION_DAYS} days (got {days}); "
            "set none to keep memories until deleted.",
            [{"field": "days", "message": f"1 to {MAX_RETENTION_DAYS}"}],
        )
    store.set_retention(tenant, days)
    stamped = 0
    if days is None:
        return stamped
    after: str | None = None
    while page := store.memories_after(tenant, after, _PAGE):
        for memory in page:
            retained = memory.retained(days)
            if retained is not memory:
                stamped += store.update_memory(retained)
        if progress:
            progress(stamped)
        if len(page) < _PAGE:
            break
        after = page[-1].memory_id
    return stamped


def forget_turns(engine: Engine, tenant: str, removed: list[RemovalOutcome]) -> int:
    """After the sweep removed expired memories of the tenant: remove the raw turns they left as
    forgotten history that arrived more than the tenant's retention ago (all of them, for a memory
    its retention ended; none without a retention). `removed`: each session's turns the memories
    were made of (`forgotten_dialogs`; the sweep gives them from its record, so a turn of them
    is removed only once forgotten). Returns how many turns went."""
    days = engine.store.get_retention(tenant)
    if days is None:
        return 0
    cutoff = engine.clock.now() - timedelta(days=days)
    gone: list[RemovalOutcome] = []
    for outcome in removed:
        if not outcome.forgotten_dialogs:
            continue
        wanted = set(outcome.forgotten_dialogs)
        for turn in engine.store.list_turns(tenant, outcome.session_uuid):
            if (
                turn.dialog_uuid in wanted
                and turn.status == TurnStatus.FORGOTTEN  # never a buffered turn: it is extracted first
                and turn.memory_id is None
                and turn.created_at <= cutoff
            ):
                # A forgotten turn has no memory: its removal cascades to nothing else, and its
                # index documents went with the memory's (`usecases.index_purge`).
                with suppress(NotFound):
                    gone.append(engine.store.delete_dialog(tenant, outcome.session_uuid, turn.dialog_uuid))
    # A session whose last turn went took the session; a thread without sessions, its records.
    thread_records.forget_ended(engine, tenant, gone)
    return len(gone)


def extract_past_retention(engine: Engine, buffers: Sequence[Buffer]) -> list[ExtractionJob]:
    """Force the extraction of every session of `buffers` (the sweep's one read of them) whose
    buffer holds a turn that arrived more than its tenant's retention ago: it becomes a memory
    (and then goes with it), never dropped unread."""
    now, days_of = engine.clock.now(), {}
    sent: list[ExtractionJob] = []
    for tenant, session_uuid, oldest in ((b.tenant, b.session_uuid, b.oldest) for b in buffers):
        if tenant not in days_of:
            days_of[tenant] = engine.store.get_retention(tenant)
        days = days_of[tenant]
        if days is not None and oldest <= now - timedelta(days=days):
            job = ExtractionJob(tenant=tenant, session_uuid=session_uuid, force=True)
            engine.queue.send(job)
            sent.append(job)
    if sent:
        log.info("sweep forced extraction of %d sessions holding turns past their retention", len(sent))
    return sent
