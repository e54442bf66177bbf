"""The extraction queue contract (SQS FIFO semantics): every backend passes these same assertions.

Visibility timeouts are whole seconds because SQS counts them so; they run on a clock the test
moves (`clocked_queue`), so a loaded host's pauses between two calls change no answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_engine.models.messages import ExtractionJob
from tests.contract.builders import MAX_RECEIVES, OTHER_TENANT, ManualClock, WorkQueue, make_job, receive_one

VISIBILITY = 1
PAST_VISIBILITY = VISIBILITY + 0.3


def test_an_empty_queue_delivers_nothing(queue: WorkQueue) -> None:
    assert queue.receive(10) == []
    assert queue.pending_count() == 0


def test_jobs_of_one_session_come_out_in_send_order(queue: WorkQueue) -> None:
    queue.send(make_job(force=False))
    queue.send(make_job(force=True))

    first = receive_one(queue)
    queue.ack(first.receipt)
    second = receive_one(queue)

    assert [first.job, second.job] == [make_job(force=False), make_job(force=True)]


def test_a_session_has_at_most_one_job_in_flight(queue: WorkQueue) -> None:
    queue.send(make_job(force=False))
    queue.send(make_job(force=True))

    first = queue.receive(10)

    assert [message.job for message in first] == [make_job(force=False)]
    assert queue.receive(10) == []


def test_a_job_in_flight_does_not_block_other_sessions(queue: WorkQueue) -> None:
    queue.send(make_job("s1"))
    queue.send(make_job("s1", force=True))
    queue.send(make_job("s2"))

    first = receive_one(queue)
    second = receive_one(queue)

    assert [first.job, second.job] == [make_job("s1"), make_job("s2")]


def test_one_receive_takes_the_oldest_job_of_each_session_up_to_max_messages(queue: WorkQueue) -> None:
    for session in ["s1", "s2", "s3"]:
        queue.send(make_job(session))

    received = queue.receive(2)

    assert [message.job for message in received] == [make_job("s1"), make_job("s2")]
    assert len({message.receipt for message in received}) == 2


def test_the_same_session_uuid_in_two_tenants_is_two_independent_sessions(queue: WorkQueue) -> None:
    queue.send(make_job("s1"))
    queue.send(make_job("s1", tenant=OTHER_TENANT))

    received = queue.receive(10)

    assert sorted(m.job.tenant for m in received) == sorted(["tenant-a", OTHER_TENANT])


def test_an_acked_job_is_gone(queue: WorkQueue) -> None:
    queue.send(make_job())

    queue.ack(receive_one(queue).receipt)

    assert queue.pending_count() == 0
    assert queue.receive(10) == []


def test_a_received_job_stays_pending_until_acked(queue: WorkQueue) -> None:
    queue.send(make_job())

    receive_one(queue)

    assert queue.pending_count() == 1


def test_an_unacked_job_is_delivered_again_after_its_visibility_timeout(
    clocked_queue: tuple[Any, ManualClock],
) -> None:
    queue, clock = clocked_queue
    queue.send(make_job())
    first = receive_one(queue, visibility_seconds=VISIBILITY)
    assert queue.receive(10, VISIBILITY) == []

    clock.advance(PAST_VISIBILITY)
    again = receive_one(queue)

    assert (again.job, again.receive_count) == (first.job, 2)
    assert again.receipt != first.receipt


def test_a_released_job_is_delivered_again_at_once_with_its_receive_counted(queue: WorkQueue) -> None:
    queue.send(make_job())
    first = receive_one(queue)

    queue.release(first.receipt)
    again = receive_one(queue)

    assert (again.job, first.receive_count, again.receive_count) == (make_job(), 1, 2)


def test_a_job_received_more_than_max_receives_times_is_dead_lettered(queue: WorkQueue) -> None:
    queue.send(make_job())
    for _ in range(MAX_RECEIVES):
        queue.release(receive_one(queue).receipt)

    assert queue.receive(10) == []
    assert queue.dead_jobs() == [make_job()]
    assert queue.pending_count() == 0


def test_a_dead_lettered_job_unblocks_the_next_job_of_its_session(queue: WorkQueue) -> None:
    queue.send(make_job(force=False))
    queue.send(make_job(force=True))
    for _ in range(MAX_RECEIVES):
        queue.release(receive_one(queue).receipt)

    # Some backends move the message on the receive that finds it over the limit and answer empty.
    received = queue.receive(1) or queue.receive(1)

    assert [message.job for message in received] == [make_job(force=True)]
    assert queue.dead_jobs() == [make_job(force=False)]


def drain(queue: WorkQueue) -> list[ExtractionJob]:
    """Play a worker that succeeds at everything: every delivered job, in delivery order."""
    delivered = []
    while received := queue.receive(10):
        for message in received:
            delivered.append(message.job)
            queue.ack(message.receipt)
    return delivered


def test_a_job_sent_twice_while_waiting_runs_at_least_once_and_at_most_twice(queue: WorkQueue) -> None:
    # Given the same job sent twice before any worker took it
    queue.send(make_job())
    queue.send(make_job())

    # When a worker drains the queue
    delivered = drain(queue)

    # Then it ran; a backend may drop the waiting twin (local) or deliver it (SQS never drops a send:
    # extraction is idempotent, a second run finds nothing to do), and nothing is left behind
    assert delivered in ([make_job()], [make_job(), make_job()])
    assert queue.pending_count() == 0


def test_an_identical_job_sent_after_the_first_was_done_is_delivered_again(queue: WorkQueue) -> None:
    # Given a job that was delivered and acked (SQS content-based dedup would drop its twin for 5 minutes)
    queue.send(make_job())
    queue.ack(receive_one(queue).receipt)

    # When the buffer crosses the threshold again and the same job is sent
    queue.send(make_job())

    # Then it is delivered: a full buffer is never left waiting for a job that was swallowed
    again = receive_one(queue)
    assert (again.job, again.receive_count) == (make_job(), 1)


def test_jobs_that_differ_are_not_deduplicated(queue: WorkQueue) -> None:
    queue.send(make_job(force=False))
    queue.send(make_job(force=True))
    queue.send(make_job("s2"))

    assert queue.pending_count() == 3


def test_an_identical_job_sent_while_the_first_is_in_flight_is_queued(queue: WorkQueue) -> None:
    # The worker may have read the buffer before the turn that sent this job: it must run again.
    queue.send(make_job())
    first = receive_one(queue)

    queue.send(make_job())
    queue.ack(first.receipt)
    again = receive_one(queue)

    assert (again.job, again.receive_count) == (make_job(), 1)


def test_queued_jobs_survive_reopening(queue: WorkQueue, reopen_queue: Callable[[], WorkQueue]) -> None:
    queue.send(make_job("s1"))
    queue.send(make_job("s1", force=True))
    queue.send(make_job("s2"))

    reopened = reopen_queue()

    assert reopened.pending_count() == 3
    assert [m.job for m in reopened.receive(10)] == [make_job("s1"), make_job("s2")]


def test_a_job_in_flight_at_shutdown_is_delivered_again_after_its_visibility_expires(
    clocked_queue: tuple[Any, ManualClock], reopen_clocked_queue: Callable[[], WorkQueue]
) -> None:
    queue, clock = clocked_queue
    queue.send(make_job())
    receive_one(queue, visibility_seconds=VISIBILITY)

    reopened = reopen_clocked_queue()
    assert reopened.receive(10) == []
    clock.advance(PAST_VISIBILITY)
    again = receive_one(reopened)

    assert (again.job, again.receive_count) == (make_job(), 2)


def test_dead_letters_survive_reopening(queue: WorkQueue, reopen_queue: Callable[[], WorkQueue]) -> None:
    queue.send(make_job())
    for _ in range(MAX_RECEIVES):
        queue.release(receive_one(queue).receipt)
    queue.receive(10)

    reopened = reopen_queue()

    assert reopened.dead_jobs() == [make_job()]
