"""A fork retried after its store write landed but its index write or job did not, over every
store/queue backend (`ENGINE_BACKENDS`): the retry finishes that fork; any other existing target
stays a conflict."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, Unavailable
from memory_engine.models.api import ConsolidateRequest, ForkRequest, RetrieveRequest
from memory_engine.models.messages import ExtractionJob, Job
from memory_engine.ports import IndexDocument
from memory_engine.usecases import consolidate, fork, retrieve
from tests.fakes.engine import ENGINE_BACKENDS, peek_jobs, run_worker

TENANT, THREAD, FORK_THREAD = "acme", "thread-1", "thread-2"


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        yield engine


class DownIndex:
    """The engine's index with every upsert failing (OpenSearch down)."""

    def __init__(self, index: Any) -> None:
        self._index = index

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        raise Unavailable("search index unavailable")


class DownQueue:
    """The engine's queue with every send failing (SQS down)."""

    def __init__(self, queue: Any) -> None:
        self._queue = queue

    def __getattr__(self, name: str) -> Any:
        return getattr(self._queue, name)

    def send(self, job: Job) -> None:
        raise Unavailable("queue unavailable")


def say(engine: Engine, n: int, session: str = "s1", thread: str = THREAD) -> None:
    body = {
        "session_uuid": session,
        "parent_session_uuid": thread,
        "new_dialog": {"uuid": f"d{n}", "query": f"turn number {n}", "answer": "ok"},
    }
    consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(body))


def fork_request(cutoff: str = "d12", thread: str | None = FORK_THREAD) -> ForkRequest:
    return ForkRequest(
        source_session_uuid="s1",
        target_session_uuid="s2",
        cutoff_dialog_uuid=cutoff,
        target_parent_session_uuid=thread,
    )


def found_in(engine: Engine, thread: str, query: str) -> set[str]:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": [thread], "user_input": {"query": query}, "options": {"limit": 50}}
    )
    return {hit.memory_id for hit in retrieve.run(engine, TENANT, request).data}


def twenty_turns_two_memories(engine: Engine) -> None:
    for n in range(1, 21):
        say(engine, n)
    run_worker(engine)


def test_a_retry_after_the_index_write_failed_finishes_the_fork_with_the_same_memories(
    engine: Engine,
) -> None:
    # Given a fork whose store write landed but whose index write failed (the client got 503)
    twenty_turns_two_memories(engine)
    with pytest.raises(Unavailable):
        fork.run(replace(engine, index=DownIndex(engine.index)), TENANT, fork_request())
    stored = [memory.memory_id for memory in engine.store.list_memories(TENANT, "s2")]
    assert len(stored) == 1 and not set(stored) & found_in(engine, FORK_THREAD, "turn number 3")

    # When the client retries the same fork
    response = fork.run(engine, TENANT, fork_request())

    # Then it answers as the first attempt would have, over the stored copies, now searchable
    assert response.data.copied_memories == stored
    assert response.data.copied_dialogs == 12
    assert response.data.buffered_dialogs == ["d9", "d10", "d11", "d12"]
    assert response.data.target_parent_session_uuid == FORK_THREAD
    assert set(stored) <= found_in(engine, FORK_THREAD, "turn number 3")


def test_a_retry_after_the_job_was_lost_queues_the_targets_extraction_again(engine: Engine) -> None:
    # Given a fork of 20 buffered turns (a full buffer) whose extraction job could not be queued
    for n in range(1, 21):
        say(engine, n)
    with pytest.raises(Unavailable):
        fork.run(replace(engine, queue=DownQueue(engine.queue)), TENANT, fork_request("d20"))
    assert engine.store.get_session(TENANT, "s2") is not None

    # When the client retries the same fork
    response = fork.run(engine, TENANT, fork_request("d20"))

    # Then the target's extraction is queued
    assert len(response.data.buffered_dialogs) == 20
    assert ExtractionJob(tenant=TENANT, session_uuid="s2") in peek_jobs(engine)


def test_forking_again_at_another_cutoff_into_the_forked_target_is_a_conflict(engine: Engine) -> None:
    twenty_turns_two_memories(engine)
    fork.run(engine, TENANT, fork_request("d12"))

    with pytest.raises(Conflict, match="already exists"):
        fork.run(engine, TENANT, fork_request("d10"))


def test_forking_again_into_another_thread_is_a_conflict(engine: Engine) -> None:
    twenty_turns_two_memories(engine)
    fork.run(engine, TENANT, fork_request())

    with pytest.raises(Conflict, match="already exists"):
        fork.run(engine, TENANT, fork_request(thread="thread-3"))


def test_forking_into_a_session_consolidated_with_the_same_dialogs_is_a_conflict(engine: Engine) -> None:
    # Given s2 written by consolidate with s1's very dialogs (uuids, words) in the fork's thread
    for n in range(1, 4):
        say(engine, n)
    for n in range(1, 4):
        say(engine, n, session="s2", thread=FORK_THREAD)

    # When s1 is forked into s2 at its last dialog
    with pytest.raises(Conflict, match="already exists"):
        fork.run(engine, TENANT, fork_request("d3"))

    # Then s2 is unchanged
    assert [turn.dialog_uuid for turn in engine.store.list_turns(TENANT, "s2")] == ["d1", "d2", "d3"]


def test_a_forked_target_that_has_moved_on_is_a_conflict(engine: Engine) -> None:
    twenty_turns_two_memories(engine)
    fork.run(engine, TENANT, fork_request())
    say(engine, 21, session="s2", thread=FORK_THREAD)

    with pytest.raises(Conflict, match="already exists"):
        fork.run(engine, TENANT, fork_request())
