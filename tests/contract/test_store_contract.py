"""The `Store` contract: every backend passes these same assertions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.errors import Conflict
from memory_engine.models.domain import TurnStatus, TurnType
from memory_engine.models.life import FactRevision, KeyFactLife, MemoryLife
from memory_engine.ports import ConsolidateOutcome, Store
from tests.contract.builders import (
    EMBEDDING,
    OTHER_TENANT,
    SESSION,
    TENANT,
    THREAD,
    append_turns,
    make_fork_plan,
    make_memory,
    make_session,
    make_turn,
    stored_turn,
)


def statuses(store: Store, session_uuid: str = SESSION) -> dict[str, TurnStatus]:
    return {turn.dialog_uuid: turn.status for turn in store.list_turns(TENANT, session_uuid)}


# -- consolidate -------------------------------------------------------------------------------


def test_a_first_turn_creates_its_session_and_is_buffered(store: Store) -> None:
    outcome = store.append_turn(make_session(), make_turn("d1"))

    assert outcome == ConsolidateOutcome(created=True, buffered_count=1)
    session = store.get_session(TENANT, SESSION)
    assert session is not None
    assert (session.parent_session_uuid, session.next_seq) == (THREAD, 1)
    assert [turn.dialog_uuid for turn in store.buffered_turns(TENANT, SESSION)] == ["d1"]


def test_a_stored_session_and_turn_read_back_whole(store: Store) -> None:
    session = make_session(user_name="민수", language="en")
    turn = make_turn(
        "d1", answer="", user_name="지훈", npc_id="npc-7", type=TurnType.RECORDED, length_limit=300
    )

    store.append_turn(session, turn)

    assert store.get_session(TENANT, SESSION) == session.model_copy(update={"next_seq": 1})
    assert stored_turn(store, TENANT, SESSION, "d1") == turn


def test_replaying_a_turn_with_the_same_content_changes_nothing(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")

    outcome = store.append_turn(make_session(), make_turn("d1"))

    assert outcome == ConsolidateOutcome(created=False, buffered_count=2)
    assert [turn.dialog_uuid for turn in store.list_turns(TENANT, SESSION)] == ["d1", "d2"]
    session = store.get_session(TENANT, SESSION)
    assert session is not None and session.next_seq == 2


def test_replaying_an_extracted_turn_is_still_an_idempotent_success(store: Store) -> None:
    append_turns(store, make_session(), "d1")
    store.save_memory(make_memory("d1"))

    outcome = store.append_turn(make_session(), make_turn("d1"))

    assert outcome == ConsolidateOutcome(created=False, buffered_count=0)


def test_reusing_a_dialog_uuid_for_other_content_is_a_conflict_naming_it(store: Store) -> None:
    append_turns(store, make_session(), "d1")

    with pytest.raises(Conflict, match="d1"):
        store.append_turn(make_session(), make_turn("d1", answer="전혀 다른 대답"))

    assert stored_turn(store, TENANT, SESSION, "d1") == make_turn("d1")


def test_turns_get_consecutive_seqs_in_append_order_whatever_seq_was_passed(store: Store) -> None:
    for uuid, seq in [("c", 7), ("a", 7), ("b", -1)]:
        store.append_turn(make_session(), make_turn(uuid, seq=seq))

    turns = store.list_turns(TENANT, SESSION)

    assert [(turn.dialog_uuid, turn.seq) for turn in turns] == [("c", 0), ("a", 1), ("b", 2)]


def test_an_existing_session_keeps_the_settings_of_its_first_turn(store: Store) -> None:
    append_turns(store, make_session(user_name="민수"), "d1")

    # (Another thread is refused outright: test_store_append_contract.py.)
    store.append_turn(make_session(user_name="지훈"), make_turn("d2"))

    session = store.get_session(TENANT, SESSION)
    assert session is not None
    assert (session.parent_session_uuid, session.user_name) == (THREAD, "민수")


def test_buffered_count_counts_only_turns_not_yet_extracted(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2", "d3")
    store.save_memory(make_memory("d1", "d2"))

    outcome = append_turns(store, make_session(), "d4")[0]

    assert outcome.buffered_count == 2
    assert [turn.dialog_uuid for turn in store.buffered_turns(TENANT, SESSION)] == ["d3", "d4"]


def test_buffered_turns_in_threads_spans_every_session_of_those_threads_only(store: Store) -> None:
    append_turns(store, make_session("s-b"), "b1", "b2")
    append_turns(store, make_session("s-a"), "a1", "a2")
    append_turns(store, make_session("s-x", parent="thread-x"), "x1")
    append_turns(store, make_session("s-y", parent="thread-y"), "y1")
    store.save_memory(make_memory("a1", session_uuid="s-a"))

    turns = store.buffered_turns_in_threads(TENANT, [THREAD, "thread-y"])

    assert [(turn.session_uuid, turn.dialog_uuid) for turn in turns] == [
        ("s-a", "a2"),
        ("s-b", "b1"),
        ("s-b", "b2"),
        ("s-y", "y1"),
    ]
    assert store.buffered_turns_in_threads(TENANT, []) == []


# -- memories ----------------------------------------------------------------------------------


def test_saving_a_memory_marks_its_source_turns_extracted(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2", "d3")
    memory = make_memory("d1", "d2")

    assert store.save_memory(memory) is True

    assert statuses(store) == {"d1": "extracted", "d2": "extracted", "d3": "buffered"}
    turn = stored_turn(store, TENANT, SESSION, "d1")
    assert turn is not None and turn.memory_id == memory.memory_id


def test_a_turn_read_by_its_dialog_uuid_names_the_memory_it_is_in(store: Store) -> None:
    # Given a session of three turns, the first two extracted into one memory
    append_turns(store, make_session(), "d1", "d2", "d3")
    memory = make_memory("d1", "d2")
    store.save_memory(memory)

    # When single turns are read by dialog uuid
    extracted = store.get_turn(TENANT, SESSION, "d2")
    buffered = store.get_turn(TENANT, SESSION, "d3")

    # Then each reads as the session lists it (an extracted one naming its memory); an unknown
    # dialog, or one asked of another session or tenant, reads as None
    listed = {turn.dialog_uuid: turn for turn in store.list_turns(TENANT, SESSION)}
    assert extracted == listed["d2"] and extracted.memory_id == memory.memory_id
    assert buffered == listed["d3"] and buffered.memory_id is None
    assert store.get_turn(TENANT, SESSION, "d9") is None
    assert store.get_turn(TENANT, "other-session", "d1") is None
    assert store.get_turn(OTHER_TENANT, SESSION, "d1") is None


def test_a_saved_memory_reads_back_whole(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")
    memory = make_memory("d1", "d2")

    store.save_memory(memory)

    assert store.get_memory(TENANT, memory.memory_id) == memory
    assert store.get_memory(TENANT, memory.memory_id).embedding == EMBEDDING  # type: ignore[union-attr]


def test_a_memorys_life_reads_back_whole_and_changes_with_an_update(store: Store) -> None:
    # Given a memory stated in March whose residence fact a later memory replaced
    append_turns(store, make_session(), "d1", "d2")
    stated = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    replaced = KeyFactLife(
        index=0, slot="residence", subject="민수", invalid_at=stated + timedelta(days=40), superseded_by="m2"
    )
    memory = make_memory("d1", "d2").model_copy(
        update={"life": MemoryLife(valid_from=stated, key_facts=[replaced])}
    )

    # When it is saved and read back, with and without vectors
    store.save_memory(memory)

    # Then its life comes back whole
    assert store.get_memory(TENANT, memory.memory_id) == memory
    assert store.get_memories(TENANT, [memory.memory_id], vectors=False)[memory.memory_id].life == memory.life

    # And an update that retires it keeps the earlier wording as a revision
    revision = FactRevision(fact="old", valid_from=stated, invalid_at=stated + timedelta(days=1))
    retired = MemoryLife(
        valid_from=stated, invalid_at=stated + timedelta(days=2), end_reason="retire", revisions=[revision]
    )
    assert store.update_memory(memory.model_copy(update={"life": retired}))
    updated = store.get_memory(TENANT, memory.memory_id)
    assert updated is not None and updated.life == retired


def test_an_update_given_the_life_it_read_is_refused_once_another_writer_changed_it(store: Store) -> None:
    # Given a stored memory that two writers read, each to mark one of its key facts replaced
    append_turns(store, make_session(), "d1", "d2")
    memory = make_memory("d1", "d2")
    store.save_memory(memory)
    read_by_both = store.get_memory(TENANT, memory.memory_id)
    assert read_by_both is not None
    later = datetime(2026, 5, 1, tzinfo=UTC)

    def marked(index: int) -> MemoryLife:
        fact = KeyFactLife(index=index, slot="residence", invalid_at=later, superseded_by=f"m{index}")
        return read_by_both.life.model_copy(update={"key_facts": [fact]})

    # When the first writer stores its mark over the life it read
    first = read_by_both.model_copy(update={"life": marked(0)})
    assert store.update_memory(first, expected_life=read_by_both.life) is True

    # Then the second writer, holding the same stale read, is refused and nothing of it is written
    second = read_by_both.model_copy(update={"life": marked(1)})
    assert store.update_memory(second, expected_life=read_by_both.life) is False
    stored = store.get_memory(TENANT, memory.memory_id)
    assert stored is not None and stored.life == marked(0)
    # And once it reads the memory again, its update over the fresh life is written
    assert store.update_memory(second, expected_life=stored.life) is True
    assert store.get_memory(TENANT, memory.memory_id) == second
    # And a memory that is not stored is refused, not created
    gone = make_memory("d9").model_copy(update={"memory_id": "m-absent"})
    assert store.update_memory(gone, expected_life=gone.life) is False
    assert store.get_memory(TENANT, "m-absent") is None


def test_several_memories_read_back_at_once_by_id_missing_ones_left_out(store: Store) -> None:
    # Given two saved memories of the tenant
    append_turns(store, make_session(), "d1", "d2", "d3", "d4")
    first, second = make_memory("d1", "d2"), make_memory("d3", "d4", first_seq=2)
    store.save_memory(first)
    store.save_memory(second)

    # When both, an unknown id and a repeat are asked for, for the tenant and for another one
    asked = [second.memory_id, "20260101_000000_ffffff", first.memory_id, second.memory_id]
    found = store.get_memories(TENANT, asked)

    # Then exactly the two come back whole, by id; another tenant gets nothing
    assert found == {first.memory_id: first, second.memory_id: second}
    assert store.get_memories("someone-else", asked) == {}
    assert store.get_memories(TENANT, []) == {}


def test_memories_read_without_vectors_are_whole_but_for_their_vectors(store: Store) -> None:
    # Given a saved memory with its own vector, one per turn and one per turn's window
    append_turns(store, make_session(), "d1", "d2")
    vectors = {
        "turn_embeddings": [[0.5, 0.25, -1.0, 0.0]] * 2,
        "window_embeddings": [[0.0, 1.0, 0.5, 0.25]] * 2,
    }
    memory = make_memory("d1", "d2").model_copy(update=vectors)
    store.save_memory(memory)

    # When read for retrieve, without vectors
    found = store.get_memories(TENANT, [memory.memory_id], vectors=False)

    # Then every other field is as stored, and every vector field is empty
    empty = {"embedding": [], "turn_embeddings": [], "window_embeddings": []}
    assert found == {memory.memory_id: memory.model_copy(update=empty)}
    whole = store.get_memories(TENANT, [memory.memory_id])[memory.memory_id]
    assert (whole.turn_embeddings, whole.window_embeddings) == (
        memory.turn_embeddings,
        memory.window_embeddings,
    )


def test_a_memorys_turn_vectors_read_back_in_source_order(store: Store) -> None:
    # Given a memory over two turns with one vector per turn
    append_turns(store, make_session(), "d1", "d2")
    vectors = [[0.5, 0.25, -1.0, 0.0], [0.0, 1.0, 0.125, -0.5]]
    memory = make_memory("d1", "d2", turn_embeddings=vectors)

    # When it is saved and read back
    store.save_memory(memory)
    found = store.get_memory(TENANT, memory.memory_id)

    # Then the turn vectors come back whole, aligned with the source dialogs
    assert found is not None and found.turn_embeddings == vectors


def test_a_memorys_window_vectors_read_back_in_source_order_and_change_with_an_update(store: Store) -> None:
    # Given a memory over two turns with one window vector per turn, saved
    append_turns(store, make_session(), "d1", "d2")
    windows = [[0.25, 0.5, 0.0, -1.0], [1.0, 0.0, -0.25, 0.5]]
    memory = make_memory("d1", "d2", turn_embeddings=[[1.0, 0.0, 0.0, 0.0]] * 2, window_embeddings=windows)
    store.save_memory(memory)

    # Then they come back whole and aligned
    found = store.get_memory(TENANT, memory.memory_id)
    assert found is not None and found.window_embeddings == windows

    # And an update (a re-embed) replaces them
    assert store.update_memory(memory.model_copy(update={"window_embeddings": windows[::-1]}))
    updated = store.get_memory(TENANT, memory.memory_id)
    assert updated is not None and updated.window_embeddings == windows[::-1]


def test_save_memory_claims_turns_exactly_once(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2", "d3")
    first = make_memory("d1", "d2")
    overlapping = make_memory("d2", "d3", first_seq=1)
    store.save_memory(first)

    assert store.save_memory(overlapping) is False

    assert store.get_memory(TENANT, overlapping.memory_id) is None
    assert statuses(store) == {"d1": "extracted", "d2": "extracted", "d3": "buffered"}
    turn = stored_turn(store, TENANT, SESSION, "d2")
    assert turn is not None and turn.memory_id == first.memory_id


def test_saving_the_same_memory_twice_writes_it_once(store: Store) -> None:
    append_turns(store, make_session(), "d1")
    memory = make_memory("d1")
    store.save_memory(memory)

    assert store.save_memory(memory) is False

    assert store.list_memories(TENANT, SESSION) == [memory]


def test_save_memory_writes_nothing_when_a_source_turn_is_missing(store: Store) -> None:
    append_turns(store, make_session(), "d1")

    assert store.save_memory(make_memory("d1", "never-sent")) is False

    assert store.list_memories(TENANT, SESSION) == []
    assert statuses(store) == {"d1": "buffered"}


def test_list_memories_orders_a_sessions_memories_by_first_seq(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2", "d3", "d4")
    later = make_memory("d3", "d4", first_seq=2, memory_id="20260318_040037_000001")
    earlier = make_memory("d1", "d2", first_seq=0, memory_id="20260318_040037_000002")
    store.save_memory(later)
    store.save_memory(earlier)

    assert store.list_memories(TENANT, SESSION) == [earlier, later]


def test_iter_memories_streams_every_memory_or_one_tenants(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")
    append_turns(store, make_session(tenant=OTHER_TENANT), "d1")
    mine = [make_memory("d1"), make_memory("d2", first_seq=1)]
    theirs = make_memory("d1", tenant=OTHER_TENANT)
    for memory in [*mine, theirs]:
        store.save_memory(memory)

    assert sorted(m.memory_id for m in store.iter_memories(TENANT)) == sorted(m.memory_id for m in mine)
    assert len(list(store.iter_memories())) == 3


# -- fork --------------------------------------------------------------------------------------


def test_a_fork_writes_its_session_turns_and_memories(store: Store) -> None:
    plan = make_fork_plan()

    store.create_fork(plan)

    assert store.get_session(TENANT, "fork-1") == plan.target.model_copy(update={"next_seq": 3})
    assert store.list_turns(TENANT, "fork-1") == plan.turns
    assert store.list_memories(TENANT, "fork-1") == plan.memories
    assert [t.dialog_uuid for t in store.buffered_turns(TENANT, "fork-1")] == ["d3"]


def test_a_fork_continues_its_seqs_after_the_last_kept_turn(store: Store) -> None:
    store.create_fork(make_fork_plan())

    store.append_turn(make_session("fork-1", parent="fork-1"), make_turn("d9", session_uuid="fork-1"))

    turn = stored_turn(store, TENANT, "fork-1", "d9")
    assert turn is not None and turn.seq == 3


def test_forking_into_an_existing_session_is_a_conflict_and_writes_nothing(store: Store) -> None:
    append_turns(store, make_session("fork-1"), "x1")

    with pytest.raises(Conflict):
        store.create_fork(make_fork_plan())

    assert [t.dialog_uuid for t in store.list_turns(TENANT, "fork-1")] == ["x1"]
    assert store.list_memories(TENANT, "fork-1") == []
