"""The `Store` contract for what the API dialects added: scopes on memories, a thread's memories in
pages, replacing a fact, deleting a whole session. Every backend passes these same assertions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_engine.models.domain import MemoryFields, scope_key
from memory_engine.ports import RemovalOutcome, Store
from tests.contract.builders import (
    OTHER_TENANT,
    SESSION,
    TENANT,
    THREAD,
    append_turns,
    make_fork_plan,
    make_memory,
    make_session,
)

USER_SCOPE = {"user_id": "123", "app": "rpg"}


def make_fact(text: str, scope: dict[str, str] | None = None, **overrides: Any) -> Any:
    """A memory-bank fact: no session, no turns, its scope's thread."""
    scope = scope or USER_SCOPE
    values: dict[str, Any] = {
        "session_uuid": "",
        "parent": scope_key(scope),
        "fields": MemoryFields(summary=text),
        "scope": scope,
        "metadata": {"kind": "fact"},
        "source_text": "",
    }
    return make_memory(**(values | overrides))


def ids(memories: list[Any]) -> list[str]:
    return [memory.memory_id for memory in memories]


def test_a_fact_reads_back_with_its_scope_whole(store: Store) -> None:
    fact = make_fact("The user's dog is named Pepper.")

    assert store.save_memory(fact) is True

    assert store.get_memory(TENANT, fact.memory_id) == fact


def test_an_engine_memory_has_an_empty_stored_scope_and_its_thread_as_visible_scope(store: Store) -> None:
    append_turns(store, make_session(), "d1")
    memory = make_memory("d1")
    store.save_memory(memory)

    stored = store.get_memory(TENANT, memory.memory_id)

    assert stored is not None
    assert (stored.scope, stored.visible_scope) == ({}, {"parent_session_uuid": THREAD})


def test_a_scope_survives_reopening_the_store(store: Store, reopen_store: Callable[[], Store]) -> None:
    fact = make_fact("민수는 부산에 산다.", {"사용자": "민수"})
    store.save_memory(fact)

    reopened = reopen_store()

    assert reopened.get_memory(TENANT, fact.memory_id) == fact


def test_listing_a_thread_gives_its_memories_only_in_memory_id_order(store: Store) -> None:
    mine = [make_fact(f"fact {n}", memory_id=f"20260318_0400{n:02d}_aaaaaa") for n in (3, 1, 2)]
    other_scope = make_fact("other scope", {"user_id": "123"}, memory_id="20260318_040000_bbbbbb")
    other_tenant = make_fact("other tenant", tenant=OTHER_TENANT, memory_id="20260318_040000_cccccc")
    for memory in [*mine, other_scope, other_tenant]:
        store.save_memory(memory)

    listed = store.list_thread_memories(TENANT, scope_key(USER_SCOPE))

    assert ids(listed) == sorted(ids(mine))


def test_pages_of_a_thread_walk_every_memory_exactly_once(store: Store) -> None:
    facts = [make_fact(f"fact {n}", memory_id=f"20260318_0400{n:02d}_abcdef") for n in range(10)]
    for fact in facts:
        store.save_memory(fact)
    thread = scope_key(USER_SCOPE)

    seen: list[str] = []
    after: str | None = None
    while page := store.list_thread_memories(TENANT, thread, after, limit=3):
        seen.extend(ids(page))
        after = page[-1].memory_id

    assert seen == sorted(ids(facts))


def test_a_thread_with_no_memory_lists_nothing(store: Store) -> None:
    assert store.list_thread_memories(TENANT, "no-such-thread") == []


def test_updating_a_memory_replaces_its_content_and_keeps_its_identity(store: Store) -> None:
    fact = make_fact("The user lives in Seoul.")
    store.save_memory(fact)
    changed = fact.model_copy(
        update={
            "fields": MemoryFields(summary="The user moved to Busan."),
            "embedding": [0.25, 0.5, -1.0, 0.0],
            "metadata": {"kind": "fact", "updated_at": "2026-03-19T00:00:00.000000Z"},
        }
    )

    assert store.update_memory(changed) is True

    assert store.get_memory(TENANT, fact.memory_id) == changed


def test_updating_an_unknown_memory_writes_nothing(store: Store) -> None:
    fact = make_fact("never stored")

    assert store.update_memory(fact) is False

    assert store.get_memory(TENANT, fact.memory_id) is None


def test_deleting_a_session_takes_its_turns_and_memories_and_nothing_else(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2", "d3")
    memory = make_memory("d1", "d2")
    store.save_memory(memory)
    append_turns(store, make_session("s-other"), "o1")
    fact = make_fact("a fact with no session")
    store.save_memory(fact)

    outcome = store.delete_session(TENANT, SESSION)

    assert outcome == RemovalOutcome(deleted_memories=[memory.memory_id], deleted_dialogs=["d1", "d2", "d3"])
    assert store.get_session(TENANT, SESSION) is None
    assert store.list_turns(TENANT, SESSION) == []
    assert store.get_memory(TENANT, memory.memory_id) is None
    assert [turn.dialog_uuid for turn in store.list_turns(TENANT, "s-other")] == ["o1"]
    assert store.get_memory(TENANT, fact.memory_id) == fact


def test_deleting_an_unknown_session_deletes_nothing_and_is_no_error(store: Store) -> None:
    fact = make_fact("a fact with no session")
    store.save_memory(fact)

    assert store.delete_session(TENANT, "no-such-session") == RemovalOutcome()
    assert store.delete_session(TENANT, "") == RemovalOutcome()
    assert store.get_memory(TENANT, fact.memory_id) == fact


def test_a_deleted_session_can_start_again_from_its_first_turn(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")
    store.delete_session(TENANT, SESSION)

    outcome = append_turns(store, make_session(), "d1")[0]

    assert (outcome.created, outcome.buffered_count) == (True, 1)
    assert [turn.seq for turn in store.list_turns(TENANT, SESSION)] == [0]


def test_an_update_cannot_move_a_memory_to_another_session_thread_or_turns(store: Store) -> None:
    append_turns(store, make_session(), "d1")
    memory = make_memory("d1")
    store.save_memory(memory)
    moved = memory.model_copy(
        update={
            "session_uuid": "s-other",
            "parent_session_uuid": "thread-2",
            "source_dialog_uuids": ["d9"],
            "fields": MemoryFields(summary="new words"),
        }
    )

    assert store.update_memory(moved) is True

    kept = memory.model_copy(update={"fields": MemoryFields(summary="new words")})
    assert store.get_memory(TENANT, memory.memory_id) == kept
    assert store.list_thread_memories(TENANT, THREAD) == [kept]
    assert store.list_thread_memories(TENANT, "thread-2") == []


def test_a_forks_copied_memories_are_listed_under_the_targets_thread(store: Store) -> None:
    append_turns(store, make_session(), "d1")
    memory = make_memory("d1")
    store.save_memory(memory)
    plan = make_fork_plan()

    store.create_fork(plan)

    assert store.list_thread_memories(TENANT, plan.target.parent_session_uuid) == plan.memories
    assert ids(store.list_thread_memories(TENANT, THREAD)) == [memory.memory_id]


def test_a_threads_latest_memories_are_its_newest_first_and_no_more(store: Store) -> None:
    # Given five memories of one thread, and one of another thread
    for number in range(5):
        assert store.save_memory(make_fact(f"fact {number}", parent=THREAD, memory_id=f"m{number}"))
    assert store.save_memory(make_fact("elsewhere", parent="other-thread", memory_id="m9"))

    # When its three latest are read / Then they are the newest three, newest first
    assert [m.memory_id for m in store.latest_thread_memories(TENANT, THREAD, 3)] == ["m4", "m3", "m2"]
    assert store.latest_thread_memories(TENANT, THREAD, 0) == []
    assert store.latest_thread_memories(OTHER_TENANT, THREAD, 3) == []
