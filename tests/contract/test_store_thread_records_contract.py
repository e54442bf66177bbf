"""The Store port's contract for a thread's own records: its character registry, its buffered
turns' vectors and its statements record, the same on every backend."""

from __future__ import annotations

from datetime import timedelta

from memory_engine.models.statements import StatementRef, ThreadStatements
from memory_engine.ports import Store
from tests.contract.builders import (
    EMBEDDING,
    OTHER_TENANT,
    SESSION,
    T0,
    TENANT,
    THREAD,
    append_turns,
    make_memory,
    make_session,
)

# -- the thread's character registry ------------------------------------------------------------


def test_a_thread_without_characters_has_an_empty_registry(store: Store) -> None:
    assert store.get_characters(TENANT, THREAD) == {}


def test_a_saved_registry_replaces_the_previous_one_and_keeps_korean_names(store: Store) -> None:
    store.save_characters(TENANT, THREAD, {"Mira Holt": ["Mira"]})
    store.save_characters(TENANT, THREAD, {"Mira Holt": ["Mira", "Holt"], "김민수": ["민수"]})

    assert store.get_characters(TENANT, THREAD) == {"Mira Holt": ["Mira", "Holt"], "김민수": ["민수"]}
    assert store.get_characters(OTHER_TENANT, THREAD) == {}


# -- buffered turn vectors (embedded once by the worker, read by retrieve) -----------------------


def test_a_turns_vector_is_stored_once_and_read_back_with_the_buffer(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")

    written = store.save_turn_vectors(TENANT, SESSION, {"d1": EMBEDDING, "gone": EMBEDDING})

    assert written == 1
    by_uuid = {turn.dialog_uuid: turn.embedding for turn in store.buffered_turns(TENANT, SESSION)}
    assert by_uuid == {"d1": EMBEDDING, "d2": None}
    in_thread = store.buffered_turns_in_threads(TENANT, [THREAD])
    assert [turn.embedding for turn in in_thread] == [EMBEDDING, None]


def test_a_turns_vector_survives_its_extraction(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")
    store.save_turn_vectors(TENANT, SESSION, {"d1": EMBEDDING, "d2": EMBEDDING})

    assert store.save_memory(make_memory("d1"))

    assert [turn.embedding for turn in store.list_turns(TENANT, SESSION)] == [EMBEDDING, EMBEDDING]


# -- the thread's statements record (supersession reads it instead of the thread) --------------


def _statements(*numbers: int) -> list[StatementRef]:
    return [
        StatementRef(
            memory_id=f"m{n}", index=0, slot="residence", subject="민수", stated_at=T0 + timedelta(days=n)
        )
        for n in numbers
    ]


def test_a_thread_without_statements_has_no_record(store: Store) -> None:
    assert store.get_statements(TENANT, THREAD) is None


def test_a_statements_record_is_created_once_and_read_back_with_its_version(store: Store) -> None:
    # Given a first record written for the thread
    first = ThreadStatements(tenant=TENANT, thread=THREAD, statements=_statements(1, 2))
    assert store.save_statements(first)

    # When it is read back
    stored = store.get_statements(TENANT, THREAD)

    # Then it holds the statements (Korean character, event time) at version 1
    assert stored == first.model_copy(update={"version": 1})
    # And a second creation of it is refused, as is the other tenant's view of it
    assert not store.save_statements(first)
    assert store.get_statements(OTHER_TENANT, THREAD) is None


def test_a_statements_record_written_from_a_stale_read_is_refused(store: Store) -> None:
    # Given the record, read by two workers at version 1
    assert store.save_statements(ThreadStatements(tenant=TENANT, thread=THREAD, statements=_statements(1)))
    read = store.get_statements(TENANT, THREAD)
    assert read is not None

    # When the first writes what it added, and the second then writes from the same read
    assert store.save_statements(read.added(_statements(2)))
    stale_write = store.save_statements(read.added(_statements(3)))

    # Then the second write is refused and the first's statements stay
    assert not stale_write
    stored = store.get_statements(TENANT, THREAD)
    assert stored is not None
    assert (stored.version, [s.memory_id for s in stored.statements]) == (2, ["m1", "m2"])


# -- forgetting a thread's own records (forget-user) ---------------------------------------------


def test_forgetting_a_threads_records_deletes_its_registry_and_statements_only(store: Store) -> None:
    # Given two threads of the tenant, and the same thread name in another tenant, each with a
    # character registry and a statements record
    for tenant, thread in ((TENANT, THREAD), (TENANT, "other-thread"), (OTHER_TENANT, THREAD)):
        store.save_characters(tenant, thread, {"김민수": ["민수"]})
        assert store.save_statements(
            ThreadStatements(tenant=tenant, thread=thread, statements=_statements(1))
        )

    # When the first thread's records are forgotten, twice (the second finds nothing)
    store.forget_thread_records(TENANT, THREAD)
    store.forget_thread_records(TENANT, THREAD)

    # Then both of its records are gone, and the others' are kept
    assert store.get_characters(TENANT, THREAD) == {}
    assert store.get_statements(TENANT, THREAD) is None
    assert store.get_characters(TENANT, "other-thread") == {"김민수": ["민수"]}
    assert store.get_statements(OTHER_TENANT, THREAD) is not None


# -- whether a thread still has a session (a delete that removed one asks) ------------------------


def test_a_thread_has_sessions_while_one_of_its_own_is_stored(store: Store) -> None:
    # Given no session of the thread, then sessions of threads that are not it: another tenant's
    # of the same name, and one whose name continues it after a '#' (its listing key shares the
    # thread's prefix on DynamoDB)
    assert not store.thread_has_sessions(TENANT, THREAD)
    append_turns(store, make_session("s-other-tenant", tenant=OTHER_TENANT), "d1")
    append_turns(store, make_session("s-longer", parent=f"{THREAD}#2"), "d2")
    assert not store.thread_has_sessions(TENANT, THREAD)

    # When a session of the thread is stored
    append_turns(store, make_session(), "d3")

    # Then the thread has one
    assert store.thread_has_sessions(TENANT, THREAD)


def test_a_dialog_delete_names_the_thread_whose_session_its_last_turn_took(store: Store) -> None:
    # Given a thread of one session with two turns
    append_turns(store, make_session(), "d1", "d2")

    # When one turn is deleted, then the last one
    first = store.delete_dialog(TENANT, SESSION, "d1")
    last = store.delete_dialog(TENANT, SESSION, "d2")

    # Then both outcomes name the session's thread; the last took the session, and the thread
    # has none left (a listing the delete just made stale is read past)
    assert (first.thread, first.deleted_session) == (THREAD, False)
    assert (last.thread, last.deleted_session) == (THREAD, True)
    assert not store.thread_has_sessions(TENANT, THREAD)
