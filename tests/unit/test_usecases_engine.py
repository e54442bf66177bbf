"""The native engine's verbs over fakes: buffering, batching, ids, cascade, fork, retrieval.

The whole story runs once per store/queue backend (`ENGINE_BACKENDS`): locally, and with the
DynamoDB store and the SQS FIFO queue on moto, the worker Lambda handler draining the queue.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, NotFound, Unavailable
from memory_engine.models.api import (
    ConsolidateRequest,
    ConsolidateResponse,
    DeleteRequest,
    ForkRequest,
    RetrieveRequest,
)
from memory_engine.models.domain import TurnStatus, is_memory_id
from memory_engine.models.messages import ExtractionJob
from memory_engine.usecases import consolidate, delete, fork, retrieve
from tests.contract.builders import stored_turn
from tests.fakes.engine import ENGINE_BACKENDS, peek_jobs, queued_jobs, run_worker

TENANT = "acme"


def say(
    engine: Engine, n: int, text: str | None = None, session: str = "s1", **options: object
) -> ConsolidateResponse:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": f"d{n}", "query": text or f"turn number {n}", "answer": "ok"},
            "options": options,
        }
    )
    return consolidate.run(engine, TENANT, request)


def ask(engine: Engine, query: str, **extra: object) -> list[str]:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": query}, **extra}
    )
    return [hit.memory_id for hit in retrieve.run(engine, TENANT, request).data]


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        yield engine


def test_nineteen_turns_queue_nothing_and_the_twentieth_queues_one_job(engine: Engine) -> None:
    # Given 19 turns
    for n in range(1, 20):
        say(engine, n)
    assert queued_jobs(engine) == 0
    # When the 20th arrives
    say(engine, 20)
    # Then exactly one extraction job is queued
    assert queued_jobs(engine) == 1


def test_the_consolidate_answer_says_when_it_queued_an_extraction(engine: Engine) -> None:
    # Given 19 turns, each answered with the buffer's size and no extraction queued
    answers = [say(engine, n) for n in range(1, 20)]
    assert [(a.extraction_queued, a.buffered) for a in answers] == [(False, n) for n in range(1, 20)]
    # When the 20th arrives, and then a turn that forces a summary
    twentieth = say(engine, 20)
    forced = say(engine, 21, force_summary=True)
    # Then both answers say an extraction was queued
    assert (twentieth.extraction_queued, twentieth.buffered) == (True, 20)
    assert forced.extraction_queued and queued_jobs(engine) == 2


def test_twenty_buffered_turns_become_two_memories_and_four_stay_buffered(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n)
    memories = run_worker(engine)
    assert [m.source_dialog_uuids for m in memories] == [
        [f"d{n}" for n in range(1, 9)],
        [f"d{n}" for n in range(9, 17)],
    ]
    buffered = engine.store.buffered_turns(TENANT, "s1")
    assert [t.dialog_uuid for t in buffered] == ["d17", "d18", "d19", "d20"]


def test_memory_ids_follow_the_creation_time_pattern(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n)
    memories = run_worker(engine)
    assert all(is_memory_id(memory.memory_id) for memory in memories)
    assert memories[0].memory_id.startswith("20260318_0400")


def test_force_summary_extracts_the_short_last_batch_too(engine: Engine) -> None:
    for n in range(1, 4):
        say(engine, n)
    say(engine, 4, force_summary=True)
    memories = run_worker(engine)
    assert [m.source_dialog_uuids for m in memories] == [["d1", "d2", "d3", "d4"]]
    assert engine.store.buffered_turns(TENANT, "s1") == []


def test_a_new_session_in_the_thread_extracts_the_earlier_sessions_leftovers(engine: Engine) -> None:
    # Given a first sitting that ended with 5 turns buffered (below the threshold, no job queued)
    for n in range(1, 6):
        say(engine, n, session="s1")
    assert queued_jobs(engine) == 0
    # When the thread's next sitting starts, then goes on
    say(engine, 6, session="s2")
    say(engine, 7, session="s2")
    # Then one forced extraction of s1 was queued by the first turn only, and it takes all 5
    assert peek_jobs(engine) == [ExtractionJob(tenant=TENANT, session_uuid="s1", force=True)]
    memories = run_worker(engine)
    assert [m.source_dialog_uuids for m in memories] == [["d1", "d2", "d3", "d4", "d5"]]
    assert engine.store.buffered_turns(TENANT, "s1") == []
    assert [t.dialog_uuid for t in engine.store.buffered_turns(TENANT, "s2")] == ["d6", "d7"]


def test_a_new_session_in_another_thread_leaves_the_earlier_session_buffered(engine: Engine) -> None:
    for n in range(1, 6):
        say(engine, n, session="s1")
    other = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s9",
            "parent_session_uuid": "thread-2",
            "new_dialog": {"uuid": "d9", "query": "elsewhere", "answer": "ok"},
        }
    )
    consolidate.run(engine, TENANT, other)
    assert queued_jobs(engine) == 0
    assert len(engine.store.buffered_turns(TENANT, "s1")) == 5


def test_a_store_failing_to_list_leftovers_still_accepts_the_new_sessions_turn(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a first sitting with buffered turns, and a store that cannot list them right now
    for n in range(1, 6):
        say(engine, n, session="s1")

    def unavailable(tenant: str, threads: object) -> list[object]:
        raise Unavailable("store busy")

    monkeypatch.setattr(engine.store, "buffered_turns_in_threads", unavailable)
    # When the next sitting starts, then the turn is stored and the leftovers stay buffered
    say(engine, 6, session="s2")
    monkeypatch.undo()
    assert [t.dialog_uuid for t in engine.store.list_turns(TENANT, "s2")] == ["d6"]
    assert len(engine.store.buffered_turns(TENANT, "s1")) == 5


def test_closing_earlier_sessions_can_be_turned_off(engine: Engine) -> None:
    engine = replace(engine, limits=replace(engine.limits, close_earlier_sessions=False))
    for n in range(1, 6):
        say(engine, n, session="s1")
    say(engine, 6, session="s2")
    assert queued_jobs(engine) == 0
    assert len(engine.store.buffered_turns(TENANT, "s1")) == 5


def test_replaying_a_dialog_with_the_same_content_changes_nothing(engine: Engine) -> None:
    say(engine, 1, "I live in Busan")
    say(engine, 1, "I live in Busan")
    assert len(engine.store.list_turns(TENANT, "s1")) == 1


def test_reusing_a_dialog_uuid_with_other_content_is_a_conflict(engine: Engine) -> None:
    say(engine, 1, "I live in Busan")
    with pytest.raises(Conflict):
        say(engine, 1, "I live in Seoul")


def consolidate_at(engine: Engine, timestamp: str | None) -> str | None:
    """Consolidate dialog d1 with the same words, naming `timestamp` (or none); its message."""
    dialog = {"uuid": "d1", "query": "I live in Busan", "answer": "ok"}
    if timestamp is not None:
        dialog["timestamp"] = timestamp
    body = {"session_uuid": "s1", "parent_session_uuid": "thread-1", "new_dialog": dialog}
    return consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(body)).message


def test_resending_a_dialog_with_another_timestamp_is_a_conflict_like_other_content(engine: Engine) -> None:
    # Given a dialog said at 10:00
    consolidate_at(engine, "2025-03-01T10:00:00Z")
    # When it is sent again, same uuid and words, said at 11:00
    with pytest.raises(Conflict, match="d1"):
        consolidate_at(engine, "2025-03-01T11:00:00Z")
    # Then it is refused; the same time, or no time (a plain retry), is the duplicate it was
    assert consolidate_at(engine, "2025-03-01T10:00:00+00:00") == "duplicate dialog ignored"
    assert consolidate_at(engine, None) == "duplicate dialog ignored"
    [turn] = engine.store.list_turns(TENANT, "s1")
    assert turn.timestamp.isoformat() == "2025-03-01T10:00:00+00:00"


def test_a_job_delivered_twice_writes_no_second_memory(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n)
    memories = run_worker(engine, deliveries=2)
    assert len(memories) == 2
    assert len(engine.store.list_memories(TENANT, "s1")) == 2


def test_a_fact_still_in_the_buffer_is_retrievable(engine: Engine) -> None:
    say(engine, 1, "My sister Jiwoo plays the cello")
    assert ask(engine, "who plays the cello?") == ["d1"]


def test_an_extracted_fact_is_retrieved_through_its_memory(engine: Engine) -> None:
    say(engine, 3, "My dog is called Pepper")
    for n in [1, 2, *range(4, 21)]:
        say(engine, n)
    run_worker(engine)
    top = ask(engine, "what is the dog called?", options={"limit": 1})
    memory = engine.store.get_memory(TENANT, top[0])
    assert memory is not None and "d3" in memory.source_dialog_uuids


def test_a_memory_built_only_from_recent_dialogs_is_not_returned(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n, f"pepper fact {n}")
    first, _ = run_worker(engine)
    recent = first.source_dialog_uuids
    hits = ask(engine, "pepper fact", recent_dialogs=recent, options={"limit": 50})
    assert first.memory_id not in hits
    assert not set(recent) & set(hits)


def test_deleting_an_extracted_dialog_rebuffers_its_siblings(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n)
    first, _ = run_worker(engine)
    result = delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid="d3"))
    assert result.data.deleted_memories == [first.memory_id]
    assert result.data.deleted_dialogs == ["d3"]
    assert sorted(result.data.rebuffered_dialogs) == sorted(set(first.source_dialog_uuids) - {"d3"})
    assert engine.store.get_memory(TENANT, first.memory_id) is None
    assert first.memory_id not in ask(engine, "turn number", options={"limit": 50})


def test_rebuffered_turns_that_fill_the_buffer_queue_extraction_again(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n)
    run_worker(engine)
    for n in range(21, 33):  # 4 + 12 = 16 buffered
        say(engine, n)
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid="d3"))  # +7 → 23
    assert queued_jobs(engine) == 1


def test_deleting_a_memory_keeps_its_turns_as_forgotten_history(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n)
    first, _ = run_worker(engine)
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid=first.memory_id))
    turn = stored_turn(engine.store, TENANT, "s1", "d1")
    assert turn is not None and turn.status is TurnStatus.FORGOTTEN
    assert engine.store.get_memory(TENANT, first.memory_id) is None


def test_deleting_an_unknown_dialog_is_not_found(engine: Engine) -> None:
    say(engine, 1)
    with pytest.raises(NotFound):
        delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid="nope"))


def test_fork_keeps_memories_before_the_cutoff_and_rebuffers_a_spanning_one(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n)
    first, second = run_worker(engine)
    # When forking at d12 (the second memory spans d9..d16)
    result = fork.run(
        engine,
        TENANT,
        ForkRequest(source_session_uuid="s1", target_session_uuid="s2", cutoff_dialog_uuid="d12"),
    ).data
    # Then only the first memory is copied and d9..d12 wait in the target's buffer
    copies = engine.store.list_memories(TENANT, "s2")
    assert [m.source_dialog_uuids for m in copies] == [first.source_dialog_uuids]
    assert result.buffered_dialogs == ["d9", "d10", "d11", "d12"]
    assert result.copied_dialogs == 12
    assert result.target_parent_session_uuid == "s2"
    # And the source is untouched
    assert len(engine.store.list_turns(TENANT, "s1")) == 20
    assert {m.memory_id for m in engine.store.list_memories(TENANT, "s1")} == {
        first.memory_id,
        second.memory_id,
    }


def test_forking_into_an_existing_session_is_a_conflict(engine: Engine) -> None:
    say(engine, 1)
    say(engine, 2, session="s2")
    with pytest.raises(Conflict):
        fork.run(
            engine,
            TENANT,
            ForkRequest(source_session_uuid="s1", target_session_uuid="s2", cutoff_dialog_uuid="d1"),
        )


def test_forking_at_an_unknown_cutoff_is_not_found(engine: Engine) -> None:
    say(engine, 1)
    with pytest.raises(NotFound):
        fork.run(
            engine,
            TENANT,
            ForkRequest(source_session_uuid="s1", target_session_uuid="s9", cutoff_dialog_uuid="d7"),
        )


def test_another_tenant_finds_nothing(engine: Engine) -> None:
    say(engine, 1, "My sister Jiwoo plays the cello")
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": "cello"}}
    )
    assert retrieve.run(engine, "other-tenant", request).data == []


def test_an_extracted_memory_keeps_one_vector_per_source_turn(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n)

    first, _ = run_worker(engine)

    assert len(first.turn_embeddings) == len(first.source_dialog_uuids) == 8
    expected = engine.embedder.embed(["당신: turn number 1\nassistant: ok"])[0]
    # Stores keep float32: equal to the embedder's output within float32 precision.
    assert first.turn_embeddings[0] == pytest.approx(expected, abs=1e-6)


def test_rebuilding_the_index_brings_back_turn_documents(engine: Engine) -> None:
    from memory_engine.indexing.documents import rebuild

    say(engine, 3, "My dog is called Pepper")
    for n in [1, 2, *range(4, 21)]:
        say(engine, n)
    run_worker(engine)

    count = rebuild(engine.store, engine.index)

    top = ask(engine, "what is the dog called?", options={"limit": 1})
    memory = engine.store.get_memory(TENANT, top[0])
    assert count == 2
    assert memory is not None and "d3" in memory.source_dialog_uuids


def said_on(engine: Engine, n: int, text: str, when: str, **options: object) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": f"d{n}", "query": text, "answer": "ok", "timestamp": when},
            "options": options,
        }
    )
    consolidate.run(engine, TENANT, request)


def date_evidence(engine: Engine, query: str) -> dict[str, float]:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": query}}
    )
    return {turn.owner: turn.features["date"] for turn in retrieve.gather(engine, TENANT, request).turns}


def test_a_buffered_turn_said_on_the_named_date_carries_the_date_match(engine: Engine) -> None:
    said_on(engine, 1, "I cooked a lentil soup", "2023-05-08T13:56:00Z")
    said_on(engine, 2, "I cooked a pumpkin soup", "2023-07-02T10:00:00Z")

    evidence = date_evidence(engine, "What soup did I cook in May 2023?")

    assert evidence == {"turn:s1:d1": 1.0, "turn:s1:d2": 0.0}


def test_an_extracted_turn_said_on_the_named_date_carries_the_date_match(engine: Engine) -> None:
    said_on(engine, 1, "I cooked a lentil soup", "2023-05-08T13:56:00Z")
    said_on(engine, 2, "I cooked a pumpkin soup", "2023-07-02T10:00:00Z", force_summary=True)
    [memory] = run_worker(engine)

    turns = retrieve.gather(
        engine,
        TENANT,
        RetrieveRequest.model_validate(
            {"parent_session_uuids": ["thread-1"], "user_input": {"query": "What soup did I cook on 2 July?"}}
        ),
    ).turns

    # One turn document per source turn, each with its own date's match
    assert sorted((turn.owner, turn.features["date"]) for turn in turns) == [
        (memory.memory_id, 0.0),
        (memory.memory_id, 1.0),
    ]
