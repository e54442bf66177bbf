"""The `Store` contract at the edges of the API's limits: the biggest turns, memories and forks.

DynamoDB caps an item at 400 KB and a transaction at 100 actions and 4 MB; the API allows turns of
2 x 100,000 characters, embeddings of thousands of dimensions and forks of any length. Every backend
passes these same assertions.
"""

from __future__ import annotations

import random

from memory_engine.models.api import MAX_TURN_CHARS
from memory_engine.models.domain import MemoryFields, TurnStatus
from memory_engine.ports import ForkPlan, Store
from tests.contract.builders import (
    SESSION,
    TENANT,
    append_turns,
    make_memory,
    make_session,
    make_turn,
    stored_turn,
)


def incompressible(length: int, seed: int) -> str:
    """Text that barely compresses: random characters from across the Unicode planes (4 bytes each
    in UTF-8 for most), the worst case for a store's size limits."""
    rng = random.Random(seed)
    return "".join(chr(rng.randrange(0x20000, 0x2A6DF)) for _ in range(length))


def test_a_turn_at_the_size_limit_reads_back_whole(store: Store) -> None:
    # Given a turn whose query and answer are both at the limit, in 4-byte characters (800 KB)
    turn = make_turn("big", query=incompressible(MAX_TURN_CHARS, 1), answer=incompressible(MAX_TURN_CHARS, 2))

    # When it is consolidated
    outcome = store.append_turn(make_session(), turn)

    # Then it reads back exactly, alone or among the session's turns, and replays idempotently
    assert outcome.created
    assert stored_turn(store, TENANT, SESSION, "big") == turn
    assert store.list_turns(TENANT, SESSION) == [turn]
    assert store.buffered_turns(TENANT, SESSION) == [turn]
    assert store.append_turn(make_session(), turn).created is False


def test_a_memory_with_a_large_embedding_and_source_text_reads_back_whole(store: Store) -> None:
    # Given a memory with 4096-dimensional vectors (values float32 holds exactly): its own, one per
    # turn and one per turn's window (17 x 16 KB), and 8 long turns
    append_turns(store, make_session(), *(f"d{i}" for i in range(8)))
    vector = [(i % 512 - 256) / 1024 for i in range(4096)]
    memory = make_memory(
        *(f"d{i}" for i in range(8)),
        embedding=vector,
        turn_embeddings=[vector] * 8,
        window_embeddings=[vector[::-1]] * 8,
        source_text=incompressible(8 * 20_000, 3),
        fields=MemoryFields(summary="긴 기억", keywords=[f"키워드{i}" for i in range(65)]),
    )

    # When it is saved
    assert store.save_memory(memory) is True

    # Then it reads back exactly, one by one, per session and in a full listing
    assert store.get_memory(TENANT, memory.memory_id) == memory
    assert store.list_memories(TENANT, SESSION) == [memory]
    assert list(store.iter_memories(TENANT)) == [memory]


def test_a_large_memory_is_deleted_with_its_cascade(store: Store) -> None:
    append_turns(store, make_session(), "d1", "d2")
    memory = make_memory("d1", "d2", source_text=incompressible(200_000, 4))
    store.save_memory(memory)

    outcome = store.delete_dialog(TENANT, SESSION, "d1")

    assert outcome.deleted_memories == [memory.memory_id]
    assert store.get_memory(TENANT, memory.memory_id) is None
    assert [t.dialog_uuid for t in store.buffered_turns(TENANT, SESSION)] == ["d2"]


def test_a_fork_longer_than_one_transaction_writes_every_turn_and_memory(store: Store) -> None:
    # Given a plan of 240 turns, the first 200 in 25 memories of 8, the rest buffered
    target = make_session("long-fork", parent="long-fork")
    memories = [
        make_memory(
            *(f"d{i}" for i in range(start, start + 8)),
            session_uuid="long-fork",
            parent="long-fork",
            first_seq=start,
            memory_id=f"20260318_050000_{start:06x}",
        )
        for start in range(0, 200, 8)
    ]
    owner = {uuid: memory.memory_id for memory in memories for uuid in memory.source_dialog_uuids}
    turns = [
        make_turn(
            f"d{i}",
            session_uuid="long-fork",
            seq=i,
            status=TurnStatus.EXTRACTED if f"d{i}" in owner else TurnStatus.BUFFERED,
            memory_id=owner.get(f"d{i}"),
        )
        for i in range(240)
    ]

    # When it is written
    store.create_fork(ForkPlan(target=target, turns=turns, memories=memories))

    # Then all of it reads back, and the session continues after the last turn
    assert store.list_turns(TENANT, "long-fork") == turns
    assert store.list_memories(TENANT, "long-fork") == memories
    assert len(store.buffered_turns(TENANT, "long-fork")) == 40
    session = store.get_session(TENANT, "long-fork")
    assert session is not None and session.next_seq == 240
    assert store.append_turn(target, make_turn("d240", session_uuid="long-fork")).buffered_count == 41


def test_a_memory_updated_past_the_size_limit_and_back_reads_back_whole_each_time(store: Store) -> None:
    # Given a small memory-bank fact
    fact = make_memory(session_uuid="", parent="scope:big", source_text="", scope={"user_id": "1"})
    store.save_memory(fact)
    # And versions of it past the size limit (long text, a long scope, a large embedding) and back
    big = fact.model_copy(
        update={
            "fields": MemoryFields(summary=incompressible(50_000, 5)),
            "source_text": incompressible(150_000, 6),
            "scope": {"user_id": "1", "note": incompressible(20_000, 7)},
            "embedding": [(i % 512 - 256) / 1024 for i in range(4096)],
        }
    )
    small = fact.model_copy(update={"fields": MemoryFields(summary="short again")})

    # When it is updated to the big version, then to the small one, each reads back exactly
    assert store.update_memory(big) is True
    assert store.get_memory(TENANT, fact.memory_id) == big
    assert store.update_memory(small) is True
    assert store.get_memory(TENANT, fact.memory_id) == small
    assert store.list_thread_memories(TENANT, "scope:big") == [small]


def test_a_session_longer_than_one_transaction_is_deleted_whole(store: Store) -> None:
    # Given a session of 120 turns (one past the size limit) and 10 memories, written as a fork
    session = make_session()
    memories = [
        make_memory(*(f"d{i}" for i in range(start, start + 8)), first_seq=start, source_text=f"{start}")
        for start in range(0, 80, 8)
    ]
    owner = {uuid: memory.memory_id for memory in memories for uuid in memory.source_dialog_uuids}
    big = incompressible(MAX_TURN_CHARS, 8)
    turns = [
        make_turn(
            f"d{i}",
            seq=i,
            query=big if i == 3 else f"turn {i}",
            status=TurnStatus.EXTRACTED if f"d{i}" in owner else TurnStatus.BUFFERED,
            memory_id=owner.get(f"d{i}"),
        )
        for i in range(120)
    ]
    store.create_fork(ForkPlan(target=session, turns=turns, memories=memories))

    # When the session is deleted
    outcome = store.delete_session(TENANT, SESSION)

    # Then every turn and memory went, and the session starts again from its first turn
    assert outcome.deleted_dialogs == [f"d{i}" for i in range(120)]
    assert outcome.deleted_memories == sorted(memory.memory_id for memory in memories)
    assert store.get_session(TENANT, SESSION) is None
    assert store.list_turns(TENANT, SESSION) == store.list_memories(TENANT, SESSION) == []
    assert list(store.iter_memories(TENANT)) == []
    assert store.append_turn(session, make_turn("d0")).buffered_count == 1
