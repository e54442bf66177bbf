"""The `Store.append_turn` contract beyond the write itself: it checks the session's thread and
says whether it created the session, so consolidate needs no read of its own, and a replay naming
another time is other content (every backend)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.errors import Conflict
from memory_engine.ports import Store
from tests.contract.builders import (
    SESSION,
    T0,
    TENANT,
    THREAD,
    append_turns,
    make_session,
    make_turn,
    stored_turn,
)


def test_the_first_turn_reports_a_new_session_and_the_next_ones_do_not(store: Store) -> None:
    first = store.append_turn(make_session(), make_turn("d1"))
    second = store.append_turn(make_session(), make_turn("d2"))
    replay = store.append_turn(make_session(), make_turn("d1"))

    assert (first.session_created, second.session_created, replay.session_created) == (True, False, False)


def test_a_turn_naming_another_thread_is_a_conflict_and_writes_nothing(store: Store) -> None:
    append_turns(store, make_session(), "d1")

    with pytest.raises(Conflict) as refused:
        store.append_turn(make_session(parent="another-thread"), make_turn("d2"))

    assert refused.value.errors == [
        {"field": "parent_session_uuid", "message": "differs from the session's thread"}
    ]
    assert THREAD in refused.value.message and "another-thread" in refused.value.message
    assert [turn.dialog_uuid for turn in store.list_turns(TENANT, SESSION)] == ["d1"]
    session = store.get_session(TENANT, SESSION)
    assert session is not None and (session.parent_session_uuid, session.next_seq) == (THREAD, 1)


def test_a_replay_naming_another_thread_is_a_conflict_too(store: Store) -> None:
    append_turns(store, make_session(), "d1")

    with pytest.raises(Conflict):
        store.append_turn(make_session(parent="another-thread"), make_turn("d1"))


def test_a_replay_naming_another_time_is_a_conflict_and_keeps_the_stored_turn(store: Store) -> None:
    # Given a stored turn said at T0
    append_turns(store, make_session(), "d1")
    # When the same dialog uuid comes again with the same words, said an hour later
    with pytest.raises(Conflict, match="d1"):
        store.append_turn(make_session(), make_turn("d1", timestamp=T0 + timedelta(hours=1)))
    # Then it is refused as other content, and the stored turn keeps its time
    turn = stored_turn(store, TENANT, SESSION, "d1")
    assert turn is not None and turn.timestamp == T0


def test_a_replay_naming_no_time_is_the_same_turn_whenever_it_arrives(store: Store) -> None:
    # Given a stored turn
    append_turns(store, make_session(), "d1")
    # When a retry sent without a timestamp arrives later (its time is its arrival: created_at)
    later = T0 + timedelta(minutes=5)
    outcome = store.append_turn(make_session(), make_turn("d1", timestamp=later, created_at=later))
    # Then it is the same turn: nothing new is stored
    assert not outcome.created
    assert [turn.timestamp for turn in store.list_turns(TENANT, SESSION)] == [T0]
