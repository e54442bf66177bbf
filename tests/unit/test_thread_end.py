"""Issue #45: a thread's character registry and statements record (both name its characters) go
with its last session. A delete that takes a session's last turn removes the session; when that
was the thread's last one, the thread's records go too. A thread that still has a session keeps
them. Both backends (SQLite; DynamoDB and SQS on moto), through the delete and sweep use cases."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, DeleteRequest
from memory_engine.models.statements import StatementRef, ThreadStatements
from memory_engine.usecases import consolidate, delete, sweep
from memory_engine.usecases.retention import set_retention
from tests.fakes.engine import run_worker
from tests.fakes.ports import SetClock

TENANT = "acme"
THREAD = "thread-1"
DAY = 86_400


def say(engine: Engine, session: str, uuid: str) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": THREAD,
            "new_dialog": {"uuid": uuid, "query": f"Mina: I live in Busan ({uuid}).", "answer": "Nice."},
            "options": {"force_summary": True},
        }
    )
    consolidate.run(engine, TENANT, request)


def keep_records(engine: Engine) -> None:
    """The thread's records as extraction and supersession leave them (both name Mina)."""
    engine.store.save_characters(TENANT, THREAD, {"Mina": ["미나"]})
    stated = StatementRef(
        memory_id="m1", index=0, slot="residence", subject="Mina", stated_at=datetime(2026, 3, 1, tzinfo=UTC)
    )
    assert engine.store.save_statements(ThreadStatements(tenant=TENANT, thread=THREAD, statements=[stated]))


def delete_dialog(engine: Engine, session: str, uuid: str) -> None:
    delete.run(engine, TENANT, DeleteRequest(session_uuid=session, dialog_uuid=uuid))


def records_kept(engine: Engine) -> bool:
    characters = engine.store.get_characters(TENANT, THREAD)
    statements = engine.store.get_statements(TENANT, THREAD)
    assert bool(characters) == (statements is not None), "the two records go together"
    return bool(characters)


def test_deleting_the_threads_last_dialog_forgets_its_records(engine: Engine) -> None:
    # Given a thread of one session with one extracted turn, and the thread's records
    say(engine, "s1", "d1")
    run_worker(engine)
    keep_records(engine)

    # When its last dialog is deleted (the memory, the turn and the session go)
    delete_dialog(engine, "s1", "d1")

    # Then the thread's records are gone too
    assert engine.store.get_session(TENANT, "s1") is None
    assert not records_kept(engine)


def test_a_thread_keeps_its_records_until_its_last_session_goes(engine: Engine) -> None:
    # Given a thread of two sessions, and the thread's records
    say(engine, "s1", "d1")
    say(engine, "s2", "d2")
    run_worker(engine)
    keep_records(engine)

    # When the first session's last dialog is deleted: the thread still has a session
    delete_dialog(engine, "s1", "d1")
    assert records_kept(engine)

    # And when the second one's is: the thread has none left
    delete_dialog(engine, "s2", "d2")
    assert not records_kept(engine)


def test_deleting_a_dialog_that_leaves_its_session_keeps_the_records(engine: Engine) -> None:
    say(engine, "s1", "d1")
    say(engine, "s1", "d2")
    keep_records(engine)

    delete_dialog(engine, "s1", "d1")

    assert engine.store.get_session(TENANT, "s1") is not None
    assert records_kept(engine)


def test_the_retention_that_removes_a_threads_last_turns_forgets_its_records(
    engine: Engine, clock: SetClock
) -> None:
    # Given a tenant keeping 30 days, a thread of one extracted turn, and the thread's records
    set_retention(engine.store, TENANT, 30)
    say(engine, "s1", "d1")
    run_worker(engine)
    keep_records(engine)

    # When 31 days pass and the sweep removes the memory and its turn (the session with it)
    clock.advance(31 * DAY)
    sweep.run(engine)

    # Then the thread's records went with them
    assert engine.store.get_session(TENANT, "s1") is None
    assert not records_kept(engine)
