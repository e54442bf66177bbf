"""The `Store.append_turn` contract beyond the write itself: it checks the session's thread and
says whether it created the session, so consolidate needs no read of its own (every backend)."""

from __future__ import annotations

import pytest

from memory_engine.errors import Conflict
from memory_engine.ports import Store
from tests.contract.builders import SESSION, TENANT, THREAD, append_turns, make_session, make_turn


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
