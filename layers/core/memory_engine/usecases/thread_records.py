"""A thread's own records (its character registry and statements record) go when the thread does.

Both name the thread's characters, so neither may outlive the thread's last session: a delete
that removed a session asks whether its thread still has one (one bounded read) and, if not,
deletes both records. Nothing is lost that the thread still needs: a later session of the same
thread starts a new registry, and supersession builds a missing statements record from one
bounded scan of the thread's memories (`usecases.thread_statements`).
"""

from __future__ import annotations

from collections.abc import Iterable

from memory_engine.engine import Engine
from memory_engine.ports import RemovalOutcome


def forget_ended(engine: Engine, tenant: str, outcomes: Iterable[RemovalOutcome]) -> list[str]:
    """Forget the records of each thread that lost its last session in `outcomes` (removals of
    one tenant); returns those threads. A thread that still has a session is left as it is."""
    ended: list[str] = []
    for thread in dict.fromkeys(o.thread for o in outcomes if o.deleted_session and o.thread):
        if not engine.store.thread_has_sessions(tenant, thread):
            engine.store.forget_thread_records(tenant, thread)
            ended.append(thread)
    return ended
