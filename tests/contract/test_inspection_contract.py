"""What the memory inspector reads of the store and the queue. Every backend passes these same
assertions; where a backend cannot answer (on SQS only the worker may receive from the queues),
the port says so with None, and the test names that backend."""

from __future__ import annotations

from typing import Any

from memory_engine.ports import QueueInspector, Store
from tests.contract.builders import (
    MAX_RECEIVES,
    OTHER_TENANT,
    TENANT,
    append_turns,
    make_job,
    make_session,
    receive_one,
)

# Backends whose jobs cannot be listed: only the worker may receive from SQS (a receive would also
# count towards dead-lettering and hold the session's FIFO group).
UNLISTABLE = {"SqsQueue"}


def test_list_sessions_gives_every_session_of_the_tenant_by_thread_then_uuid(store: Store) -> None:
    for session_uuid, thread in [("s-b", "thread-2"), ("s-c", "thread-1"), ("s-a", "thread-1")]:
        append_turns(store, make_session(session_uuid, parent=thread), f"{session_uuid}-d1")

    listed = store.list_sessions(TENANT)

    assert [(s.parent_session_uuid, s.session_uuid) for s in listed] == [
        ("thread-1", "s-a"),
        ("thread-1", "s-c"),
        ("thread-2", "s-b"),
    ]
    assert listed[0] == store.get_session(TENANT, "s-a")


def test_list_sessions_never_shows_another_tenants_sessions(store: Store) -> None:
    append_turns(store, make_session("mine"), "d1")
    # A tenant whose name starts with the other's, and one with the key separator in it.
    for tenant in (OTHER_TENANT, TENANT + "x", TENANT + "#S#"):
        append_turns(store, make_session("theirs", tenant=tenant), "d1")

    assert [s.session_uuid for s in store.list_sessions(TENANT)] == ["mine"]
    assert store.list_sessions("nobody") == []


def _inspect(queue: Any, tenant: str = TENANT) -> Any:
    assert isinstance(queue, QueueInspector)
    return queue.snapshot(tenant)


def test_a_snapshot_lists_the_tenants_waiting_jobs_where_the_queue_can(queue: Any) -> None:
    queue.send(make_job("s1"))
    queue.send(make_job("s2", force=True))
    queue.send(make_job("s1", tenant=OTHER_TENANT))

    snapshot = _inspect(queue)

    if type(queue).__name__ in UNLISTABLE:
        assert (snapshot.pending, snapshot.dead) == (None, None)
    else:
        assert (snapshot.pending, snapshot.dead) == ([make_job("s1"), make_job("s2", force=True)], [])


def test_a_snapshot_shows_the_tenants_dead_jobs_only(queue: Any) -> None:
    queue.send(make_job("mine"))
    queue.send(make_job("theirs", tenant=OTHER_TENANT))
    for _ in range(MAX_RECEIVES):
        for message in queue.receive(2):
            queue.release(message.receipt, f"RuntimeError: the model timed out ({message.job.tenant})")
    assert queue.receive(10) == []

    dead, theirs = _inspect(queue).dead, _inspect(queue, OTHER_TENANT).dead

    if type(queue).__name__ in UNLISTABLE:
        assert (dead, theirs) == (None, None)
    else:
        assert [entry.job for entry in dead] == [make_job("mine")]
        assert [entry.job for entry in theirs] == [make_job("theirs", tenant=OTHER_TENANT)]
    # Looking leaves the dead letters where they are.
    assert len(queue.dead_jobs()) == 2


def test_a_dead_job_carries_the_reason_of_its_last_failure_where_the_queue_keeps_it(queue: Any) -> None:
    queue.send(make_job())
    for attempt in range(MAX_RECEIVES):
        queue.release(receive_one(queue).receipt, f"Unavailable: attempt {attempt}")
    assert queue.receive(10) == []

    dead = _inspect(queue).dead

    if type(queue).__name__ in UNLISTABLE:
        assert dead is None
    else:
        assert [(entry.job, entry.error) for entry in dead] == [
            (make_job(), f"Unavailable: attempt {MAX_RECEIVES - 1}")
        ]
