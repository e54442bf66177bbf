"""A job in hand keeps its session for as long as its holder extends it (SQS's
ChangeMessageVisibility): every backend passes these same assertions, on a clock the test moves."""

from __future__ import annotations

from typing import Any

from tests.contract.builders import ManualClock, make_job, receive_one

VISIBILITY = 30


def test_an_extended_job_stays_hidden_past_its_first_visibility(
    clocked_queue: tuple[Any, ManualClock],
) -> None:
    # Given a job received for 30 s, extended by 30 s from 20 s in
    queue, clock = clocked_queue
    queue.send(make_job())
    first = receive_one(queue, VISIBILITY)
    clock.advance(20)
    assert queue.extend(first.receipt, VISIBILITY) is True

    # When 40 s have passed since the receive (past the first visibility, within the extension)
    clock.advance(20)

    # Then nobody else gets it: neither the job nor its session's group
    assert queue.receive(10, VISIBILITY) == []


def test_an_extended_job_not_extended_again_is_delivered_after_its_extension(
    clocked_queue: tuple[Any, ManualClock],
) -> None:
    # Given a job extended once, by 30 s from 20 s in, then left (its holder died)
    queue, clock = clocked_queue
    queue.send(make_job())
    first = receive_one(queue, VISIBILITY)
    clock.advance(20)
    queue.extend(first.receipt, VISIBILITY)

    # When the extension runs out
    clock.advance(VISIBILITY + 2)

    # Then the job is delivered again, its receive counted
    again = queue.receive(1, VISIBILITY)
    assert [(message.job, message.receive_count) for message in again] == [(make_job(), 2)]


def test_a_job_extended_while_it_runs_is_held_for_as_long_as_it_runs(
    clocked_queue: tuple[Any, ManualClock],
) -> None:
    # Given a job whose holder extends it every 10 s, as a running job's lease does
    queue, clock = clocked_queue
    queue.send(make_job())
    first = receive_one(queue, VISIBILITY)

    # When it runs ten times its visibility
    for _ in range(30):
        clock.advance(VISIBILITY / 3)
        assert queue.extend(first.receipt, VISIBILITY) is True
        assert queue.receive(10, VISIBILITY) == []

    # Then it was never delivered again, and its ack still holds
    queue.ack(first.receipt)
    assert queue.pending_count() == 0


def test_extending_an_acked_job_says_its_receipt_is_stale(clocked_queue: tuple[Any, ManualClock]) -> None:
    queue, _ = clocked_queue
    queue.send(make_job())
    first = receive_one(queue, VISIBILITY)
    queue.ack(first.receipt)

    assert queue.extend(first.receipt, VISIBILITY) is False


def test_a_job_retried_later_is_hidden_for_its_delay_on_the_clock(
    clocked_queue: tuple[Any, ManualClock],
) -> None:
    # Given a job that failed and waits 60 s
    queue, clock = clocked_queue
    queue.send(make_job())
    first = receive_one(queue, VISIBILITY)
    queue.retry_later(first.receipt, 60, "the model timed out")

    # When 59 s have passed, then 62
    clock.advance(59)
    early = queue.receive(10, VISIBILITY)
    clock.advance(3)
    late = queue.receive(10, VISIBILITY)

    # Then it comes back only after its delay
    assert early == []
    assert [message.receive_count for message in late] == [2]
