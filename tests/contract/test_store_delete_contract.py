"""The Store port's contract for deletion: a memory, a dialog, a session's last turn — the same on
every backend."""

from __future__ import annotations

import pytest

from memory_engine.errors import NotFound
from memory_engine.models.domain import TurnStatus
from memory_engine.ports import Store
from tests.contract.builders import (
    SESSION,
    TENANT,
    append_turns,
    make_memory,
    make_session,
    stored_turn,
)


def statuses(store: Store, session_uuid: str = SESSION) -> dict[str, TurnStatus]:
    return {turn.dialog_uuid: turn.status for turn in store.list_turns(TENANT, session_uuid)}


# -- deletion ----------------------------------------------------------------------------------


def test_deleting_a_memory_marks_its_turns_forgotten(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2", "d3")
    memory = make_memory("d1", "d2")
    store.save_memory(memory)

    outcome = store.delete_memory(TENANT, memory.memory_id)

    assert outcome.deleted_memories == [memory.memory_id]
    assert outcome.buffered_count == 1
    assert store.get_memory(TENANT, memory.memory_id) is None
    assert statuses(store) == {"d1": "forgotten", "d2": "forgotten", "d3": "buffered"}
    turn = stored_turn(store, TENANT, SESSION, "d1")
    assert turn is not None and turn.memory_id is None


def test_deleting_an_unknown_memory_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.delete_memory(TENANT, "20260318_040037_ffffff")


def test_deleting_a_buffered_dialog_removes_only_that_turn(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")

    outcome = store.delete_dialog(TENANT, SESSION, "d1")

    assert (outcome.deleted_dialogs, outcome.deleted_memories, outcome.buffered_count) == (["d1"], [], 1)
    assert statuses(store) == {"d2": "buffered"}


def test_deleting_an_extracted_dialog_deletes_its_memory_and_rebuffers_its_siblings(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2", "d3", "d4")
    memory = make_memory("d1", "d2", "d3")
    store.save_memory(memory)

    outcome = store.delete_dialog(TENANT, SESSION, "d2")

    assert outcome.deleted_dialogs == ["d2"]
    assert outcome.deleted_memories == [memory.memory_id]
    assert outcome.rebuffered_dialogs == ["d1", "d3"]
    assert outcome.buffered_count == 3
    assert store.get_memory(TENANT, memory.memory_id) is None
    assert [t.dialog_uuid for t in store.buffered_turns(TENANT, SESSION)] == ["d1", "d3", "d4"]
    assert all(t.memory_id is None for t in store.list_turns(TENANT, SESSION))


def test_deleting_a_forgotten_dialog_removes_the_turn(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")
    memory = make_memory("d1", "d2")
    store.save_memory(memory)
    store.delete_memory(TENANT, memory.memory_id)

    outcome = store.delete_dialog(TENANT, SESSION, "d1")

    assert (outcome.deleted_dialogs, outcome.deleted_memories, outcome.rebuffered_dialogs) == (["d1"], [], [])
    assert statuses(store) == {"d2": "forgotten"}


def test_deleting_a_sessions_last_turn_deletes_the_session(store: Store) -> None:
    # Given a session of two turns, the first extracted alone into a memory
    append_turns(store, make_session(), "d1", "d2")
    memory = make_memory("d1")
    store.save_memory(memory)
    # When both turns are deleted
    first = store.delete_dialog(TENANT, SESSION, "d1")
    last = store.delete_dialog(TENANT, SESSION, "d2")
    # Then the session stayed while it held a turn, and went with its last one: nothing is listed
    assert (first.deleted_session, last.deleted_session) == (False, True)
    assert store.get_session(TENANT, SESSION) is None
    assert store.list_sessions(TENANT) == []
    assert store.get_memory(TENANT, memory.memory_id) is None
    # And a new turn starts the session afresh
    append_turns(store, make_session(), "d3")
    assert [t.seq for t in store.list_turns(TENANT, SESSION)] == [0]


def test_deleting_the_last_turn_of_an_extracted_memory_deletes_memory_and_session(store: Store) -> None:
    append_turns(store, make_session(), "d1")
    store.save_memory(make_memory("d1"))

    outcome = store.delete_dialog(TENANT, SESSION, "d1")

    assert outcome.deleted_session
    assert store.get_session(TENANT, SESSION) is None


def test_a_session_whose_forgotten_turn_remains_is_kept(store: Store) -> None:
    # Given a memory deleted (its turns stay, forgotten) and one of its two turns deleted
    append_turns(store, make_session(), "d1", "d2")
    memory = make_memory("d1", "d2")
    store.save_memory(memory)
    store.delete_memory(TENANT, memory.memory_id)
    outcome = store.delete_dialog(TENANT, SESSION, "d1")
    # Then the session holds the other and stays
    assert not outcome.deleted_session
    assert store.get_session(TENANT, SESSION) is not None


def test_deleting_a_dialog_of_an_unknown_session_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.delete_dialog(TENANT, "no-such-session", "d1")


def test_deleting_an_unknown_dialog_is_not_found(store: Store) -> None:
    append_turns(store, make_session(), "d1")

    with pytest.raises(NotFound):
        store.delete_dialog(TENANT, SESSION, "no-such-dialog")


def test_a_removal_hands_back_the_memory_it_removed_as_it_was_stored(store: Store) -> None:
    # Given a memory whose extractor named a fact it replaces (read after it went by nobody else)
    append_turns(store, make_session(), "d1", "d2", "d3", "d4")
    first = make_memory("d1", "d2").model_copy(
        update={"metadata": {"replaces_json": '{"0": ["m#0", "update"]}'}}
    )
    second = make_memory("d3", "d4")
    store.save_memory(first)
    store.save_memory(second)

    # When one goes by id and the other with a turn it was made of
    by_id = store.delete_memory(TENANT, first.memory_id)
    by_dialog = store.delete_dialog(TENANT, SESSION, "d3")

    # Then each outcome holds the memory removed, metadata included; a buffered turn's holds none
    assert [(m.memory_id, m.metadata) for m in by_id.removed] == [(first.memory_id, first.metadata)]
    assert [m.memory_id for m in by_dialog.removed] == [second.memory_id]
    assert store.delete_dialog(TENANT, SESSION, "d4").removed == []
