"""Retries with a delay, dead letters with their error, and redriving them (`memory-engine jobs`):
every queue backend passes these same assertions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.contract.builders import ManualClock, WorkQueue, make_job, receive_one

DELAY = 1
PAST_DELAY = DELAY + 0.3


def test_a_job_retried_later_stays_hidden_with_its_group_until_the_delay_passes(
    clocked_queue: tuple[Any, ManualClock],
) -> None:
    queue, clock = clocked_queue
    queue.send(make_job(force=False))
    queue.send(make_job(force=True))
    first = receive_one(queue)

    queue.retry_later(first.receipt, DELAY, "LlmUnavailable: down")

    # The session's next job waits behind it (FIFO order), and nothing else is delivered meanwhile.
    assert queue.receive(10) == []
    clock.advance(PAST_DELAY)
    again = receive_one(queue)
    assert (again.job, again.receive_count) == (make_job(force=False), 2)


def test_a_buried_job_is_a_dead_letter_with_its_error_and_no_longer_queued(queue: WorkQueue) -> None:
    queue.send(make_job())
    message = receive_one(queue)

    queue.bury(message, "LlmBadOutput: no valid answer in 2 requests")

    assert queue.receive(10) == [] and queue.pending_count() == 0
    [dead] = queue.dead_letters()
    assert (dead.job, dead.error, dead.receive_count) == (
        make_job(),
        "LlmBadOutput: no valid answer in 2 requests",
        1,
    )
    assert dead.id and dead.dead_at is not None


def test_burying_unblocks_the_next_job_of_the_session(queue: WorkQueue) -> None:
    queue.send(make_job(force=False))
    queue.send(make_job(force=True))

    queue.bury(receive_one(queue), "boom")

    assert receive_one(queue).job == make_job(force=True)


def test_listing_dead_letters_leaves_them_there(queue: WorkQueue) -> None:
    queue.send(make_job())
    queue.bury(receive_one(queue), "boom")

    first, second = queue.dead_letters(), queue.dead_letters()

    assert [dead.id for dead in first] == [dead.id for dead in second]


def test_redriving_every_dead_letter_queues_each_job_again_as_a_new_job(queue: WorkQueue) -> None:
    for session in ["s1", "s2"]:
        queue.send(make_job(session))
        queue.bury(receive_one(queue), f"boom {session}")

    moved = queue.redrive()

    assert sorted(dead.job.session_uuid for dead in moved) == ["s1", "s2"]
    assert queue.dead_letters() == []
    redelivered = queue.receive(10)
    assert sorted((m.job.session_uuid, m.receive_count) for m in redelivered) == [("s1", 1), ("s2", 1)]


def test_redriving_by_id_moves_only_the_named_dead_letters(queue: WorkQueue) -> None:
    for session in ["s1", "s2"]:
        queue.send(make_job(session))
        queue.bury(receive_one(queue), "boom")
    by_session = {dead.job.session_uuid: dead.id for dead in queue.dead_letters()}

    moved = queue.redrive([by_session["s2"]])

    assert [dead.job.session_uuid for dead in moved] == ["s2"]
    assert [dead.job.session_uuid for dead in queue.dead_letters()] == ["s1"]
    assert receive_one(queue).job == make_job("s2")


def test_dead_letters_keep_their_error_across_reopening(
    queue: WorkQueue, reopen_queue: Callable[[], WorkQueue]
) -> None:
    queue.send(make_job())
    queue.bury(receive_one(queue), "boom")

    assert [dead.error for dead in reopen_queue().dead_letters()] == ["boom"]
