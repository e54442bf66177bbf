"""What a consolidate costs on AWS, counted with botocore's event hooks (moto answers the calls)."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.usecases import consolidate, retrieve, sweep
from tests.aws.conftest import AwsCalls
from tests.fakes.engine import run_worker


def say(engine: Engine, n: int, session: str = "s1", thread: str = "thread-1", **options: object) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": thread,
            "new_dialog": {"uuid": f"d{n}", "query": f"turn number {n}", "answer": "ok"},
            "options": options,
        }
    )
    consolidate.run(engine, "acme", request)


def test_a_turn_below_the_threshold_is_exactly_one_dynamodb_write_and_no_queue_call(
    engine: Engine, aws_calls: AwsCalls
) -> None:
    # Given a session with some turns
    for n in range(1, 6):
        say(engine, n)
    aws_calls.reset()

    # When one more turn below the threshold is consolidated
    say(engine, 6)

    # Then it cost exactly one write (one conditional transaction) and nothing on SQS
    assert aws_calls.dynamodb_writes() == 1
    assert aws_calls.of("dynamodb").get("TransactWriteItems") == 1
    assert aws_calls.of("sqs") == {}


def test_the_first_turn_of_a_session_is_also_one_write(engine: Engine, aws_calls: AwsCalls) -> None:
    say(engine, 1)

    assert aws_calls.dynamodb_writes() == 1
    assert aws_calls.of("sqs") == {}


def test_the_turn_that_reaches_the_threshold_adds_exactly_one_queue_send(
    engine: Engine, aws_calls: AwsCalls
) -> None:
    for n in range(1, 20):
        say(engine, n)
    aws_calls.reset()

    say(engine, 20)

    assert aws_calls.dynamodb_writes() == 1
    assert aws_calls.of("sqs") == {"SendMessage": 1}


def test_a_replayed_turn_writes_nothing_new_and_queues_nothing(engine: Engine, aws_calls: AwsCalls) -> None:
    say(engine, 1)
    aws_calls.reset()

    say(engine, 1)

    # The one conditional write is refused by DynamoDB: nothing changed, nothing was queued.
    assert aws_calls.dynamodb_writes() == 1
    assert aws_calls.of("sqs") == {}
    assert len(engine.store.list_turns("acme", "s1")) == 1


def test_a_replayed_turn_with_a_full_buffer_queues_the_job_again_and_writes_nothing(
    engine: Engine, aws_calls: AwsCalls
) -> None:
    # Given the turn that reached the threshold (its first attempt may have failed to queue the job)
    for n in range(1, 21):
        say(engine, n)
    aws_calls.reset()

    # When the client sends it again
    say(engine, 20)

    # Then the refused write changed nothing, and the job is queued once more
    assert aws_calls.dynamodb_writes() == 1
    assert aws_calls.of("sqs") == {"SendMessage": 1}
    assert len(engine.store.list_turns("acme", "s1")) == 20


def test_retrieve_reads_the_memories_it_returns_in_one_batch(engine: Engine, aws_calls: AwsCalls) -> None:
    # Given 20 turns extracted into 2 memories, 4 turns still buffered
    for n in range(1, 21):
        say(engine, n)
    assert len(run_worker(engine)) == 2
    aws_calls.reset()

    # When a retrieve returns both memories and the buffered turns
    request = RetrieveRequest.model_validate(
        {
            "parent_session_uuids": ["thread-1"],
            "user_input": {"query": "turn number"},
            "options": {"limit": 10},
        }
    )
    hits = retrieve.run(engine, "acme", request).data

    # Then DynamoDB saw one query (buffered turns) and one BatchGetItem (both memories), no GetItem
    assert sorted(hit.kind for hit in hits) == ["dialog"] * 4 + ["memory"] * 2
    assert aws_calls.of("dynamodb") == {"Query": 1, "BatchGetItem": 1}


def test_a_turn_below_the_threshold_reads_the_session_once(engine: Engine, aws_calls: AwsCalls) -> None:
    # Given a session with some turns
    for n in range(1, 6):
        say(engine, n)
    aws_calls.reset()

    # When one more turn is consolidated
    say(engine, 6)

    # Then the store's own read of the session is the only read: the thread check and "is the
    # session new" come from the write, not from a read in the use case
    assert aws_calls.of("dynamodb") == {"GetItem": 1, "TransactWriteItems": 1}


def test_a_sweep_reads_each_buffered_turn_once(engine: Engine, aws_calls: AwsCalls) -> None:
    # Given 12 sessions of 3 buffered turns each, under a tenant's retention (its forced
    # extraction reads the buffers too)
    engine.store.set_retention("acme", 30)
    for session in range(12):
        for n in range(1, 4):
            say(engine, n, session=f"s{session}", thread=f"thread-{session}")
    aws_calls.reset()

    # When the sweep runs (full buffers to queue, buffers past the retention to force)
    sweep.run(engine)

    # Then one scan of the buffered turns served both: 36 items examined, not twice that
    assert aws_calls.of("dynamodb").get("Scan") == 1
    assert aws_calls.scanned == 36
