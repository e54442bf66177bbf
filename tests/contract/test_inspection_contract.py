"""What the memory inspector reads of the store and the queue. Every backend passes these same
assertions; where a backend cannot answer (on SQS only the worker may receive from the queues),
the port says so with None, and the test names that backend."""

from __future__ import annotations

from typing import Any

from memory_engine.models.domain import FACT_KIND, scope_key
from memory_engine.ports import QueueInspector, Store
from tests.contract.builders import (
    MAX_RECEIVES,
    OTHER_TENANT,
    TENANT,
    append_turns,
    make_job,
    make_memory,
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


def test_sessions_come_in_keyset_pages_that_visit_each_session_once(store: Store) -> None:
    # Given seven sessions in three threads
    wanted = [(f"thread-{n % 3}", f"s-{n}") for n in range(7)]
    for thread, session_uuid in wanted:
        append_turns(store, make_session(session_uuid, parent=thread), f"{session_uuid}-d1")

    # When they are walked three at a time, each page starting after the last one's last session
    pages: list[list[tuple[str, str]]] = []
    after: tuple[str, str] | None = None
    while page := store.list_sessions(TENANT, after, 3):
        pages.append([(s.parent_session_uuid, s.session_uuid) for s in page])
        after = pages[-1][-1]

    # Then every session comes once, in the order of the whole listing, in pages of at most three
    assert [len(page) for page in pages] == [3, 3, 1]
    assert [pair for page in pages for pair in page] == sorted(wanted)


def _fact(scope: dict[str, str], tenant: str = TENANT) -> Any:
    return make_memory(
        session_uuid="",
        tenant=tenant,
        parent=scope_key(scope),
        scope=scope,
        metadata={"kind": FACT_KIND},
        source_dialog_uuids=[],
    )


def test_fact_scopes_are_counted_in_pages_without_the_engines_memories(store: Store) -> None:
    # Given facts in three scopes (2, 1 and 3 facts), an engine memory, and another tenant's fact
    scopes = [{"user_id": "ann"}, {"user_id": "bo", "app": "rpg"}, {"userid": "c-1"}]
    for scope, count in zip(scopes, (2, 1, 3), strict=True):
        for _ in range(count):
            assert store.save_memory(_fact(scope))
    append_turns(store, make_session(), "d1")
    assert store.save_memory(make_memory("d1"))
    assert store.save_memory(_fact(scopes[0], tenant=OTHER_TENANT))

    # When the scopes are walked two at a time
    first = store.fact_scopes(TENANT, None, 2)
    rest = store.fact_scopes(TENANT, first[-1].thread, 2)

    # Then each scope comes once, with its scope and its count of facts
    found = {scope_key(s.scope): (s.scope, s.facts) for s in [*first, *rest]}
    assert found == {scope_key(scope): (scope, count) for scope, count in zip(scopes, (2, 1, 3), strict=True)}
    assert [len(first), len(rest)] == [2, 1]
    assert all(s.thread == scope_key(s.scope) for s in [*first, *rest])
    assert store.fact_scopes(TENANT, rest[-1].thread, 2) == []


def test_a_deleted_fact_leaves_its_scopes_count(store: Store) -> None:
    kept, gone = _fact({"user_id": "ann"}), _fact({"user_id": "ann"})
    assert store.save_memory(kept) and store.save_memory(gone)

    store.delete_memory(TENANT, gone.memory_id)

    assert [(s.scope, s.facts) for s in store.fact_scopes(TENANT)] == [({"user_id": "ann"}, 1)]


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
