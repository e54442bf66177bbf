"""The second delete from an eventually consistent index (usecases/index_purge.py): every delete
from OpenSearch queues one, due once the index shows every write; the worker hides it until then,
then deletes again. The local index shows a write at once and gets none."""

from __future__ import annotations

from datetime import timedelta

from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.engine import Engine
from memory_engine.models.api import DeleteRequest
from memory_engine.models.messages import MAX_PURGE_IDS, ChatMemoryJob, IndexPurgeJob, Job
from memory_engine.models.queue import ReceivedJob
from memory_engine.usecases import delete, forget_user, index_purge, jobs
from tests.fakes.engine import extract_one_turn, fake_engine, run_worker
from tests.fakes.opensearch import StubCluster
from tests.fakes.ports import ListQueue, RecordingJobSource, SetClock

TENANT = "acme"
USER = "7f3c2a9e-4b1d-4c8e-9a6f-2d5e8b1c0f47"


def on_opensearch(service: str = "aoss") -> tuple[Engine, StubCluster]:
    """An engine whose index is OpenSearch (a stub transport whose searches find one copy)."""
    engine = fake_engine()
    engine.clock = SetClock()
    cluster = StubCluster(stored=[{"_id": "copy-1", "doc_id": "m"}])
    engine.index = OpenSearchIndex(
        "https://stub", dimension=engine.embedder.dimension, service=service, client=cluster.client()
    )
    return engine, cluster


def extracted_memory(engine: Engine) -> str:
    """One turn of session s1, extracted at once; its memory id."""
    extract_one_turn(engine, TENANT)
    [memory] = run_worker(engine)
    return memory.memory_id


def purges(engine: Engine) -> list[IndexPurgeJob]:
    assert isinstance(engine.queue, ListQueue)
    return [job for job in engine.queue.jobs if isinstance(job, IndexPurgeJob)]


def received(job: Job) -> ReceivedJob:
    return ReceivedJob(receipt="r-1", job=job, receive_count=1)


def test_a_delete_on_serverless_queues_a_second_delete_due_when_the_index_has_settled() -> None:
    # Given a memory extracted into a Serverless index
    engine, _ = on_opensearch("aoss")
    memory_id = extracted_memory(engine)
    # When the dialog it came from is deleted
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid="d1"))
    # Then a purge of that memory is queued, due 60 s on (twice the refresh AWS documents)
    assert purges(engine) == [
        IndexPurgeJob(
            tenant=TENANT, memory_ids=[memory_id], not_before=engine.clock.now() + timedelta(seconds=60)
        )
    ]


def test_a_managed_domain_refreshing_every_second_gets_a_shorter_wait() -> None:
    engine, _ = on_opensearch("es")
    memory_id = extracted_memory(engine)

    index_purge.delete(engine, TENANT, [memory_id])

    [job] = purges(engine)
    assert job.not_before == engine.clock.now() + timedelta(seconds=10)


def test_an_index_that_shows_every_write_at_once_gets_no_second_delete() -> None:
    # Given the local index, and an OpenSearch index refreshed on every write (test clusters)
    local = fake_engine()
    refreshed, _ = on_opensearch("es")
    assert isinstance(refreshed.index, OpenSearchIndex)
    refreshed.index.refresh = True
    # When each deletes a memory / Then nothing is queued
    for engine in (local, refreshed):
        index_purge.delete(engine, TENANT, ["20260318_040037_a1b2c3"])
        assert purges(engine) == []


def test_forgetting_a_chat_user_queues_the_second_delete_of_their_memories() -> None:
    # Given a chat user with a remembered fact, on Serverless
    engine, _ = on_opensearch("aoss")
    jobs.run(engine, ChatMemoryJob(tenant=TENANT, userid=USER, dialog_uuid="c1", user_messages=["I am Ana."]))
    facts = [memory.memory_id for memory in engine.store.iter_memories(TENANT)]
    assert facts
    # When the user's memory is deleted
    forget_user.run(engine, TENANT, USER)
    # Then the second delete names every memory the first one removed
    assert sorted(id for job in purges(engine) for id in job.memory_ids) == sorted(facts)


def test_a_purge_of_many_memories_is_cut_into_bounded_jobs() -> None:
    engine, _ = on_opensearch("aoss")
    ids = [f"m{n}" for n in range(MAX_PURGE_IDS * 2 + 1)]

    index_purge.again_later(engine, TENANT, ids)

    assert [len(job.memory_ids) for job in purges(engine)] == [MAX_PURGE_IDS, MAX_PURGE_IDS, 1]
    assert [id for job in purges(engine) for id in job.memory_ids] == ids


def test_the_worker_hides_a_purge_received_early_for_the_rest_of_its_wait_and_sends_nothing() -> None:
    # Given a purge due in 60 s, received now
    engine, cluster = on_opensearch("aoss")
    due = engine.clock.now() + timedelta(seconds=60)
    job = IndexPurgeJob(tenant=TENANT, memory_ids=["m1"], not_before=due)
    source = RecordingJobSource()
    # When the worker gets it
    outcome = jobs.attempt(engine, source, received(job), jobs.RetryPolicy())
    # Then it goes back to the queue hidden for 60 s, and the index saw no request
    assert (outcome, source.settled, cluster.requests) == ("retry", [("retry", 60.0)], [])


def test_a_due_purge_deletes_the_memories_and_their_turns_again() -> None:
    # Given a purge received once its time has come
    engine, cluster = on_opensearch("aoss")
    job = IndexPurgeJob(tenant=TENANT, memory_ids=["m1"], not_before=engine.clock.now())
    engine.clock.advance(1)
    # When the worker runs it
    outcome = jobs.attempt(engine, RecordingJobSource(), received(job), jobs.RetryPolicy())
    # Then the index is searched for the memory's copies (its turns' too) and they are deleted
    assert outcome == "done"
    [search] = cluster.sent("_search")
    either = [{"terms": {"doc_id": ["m1"]}}, {"terms": {"memory_id": ["m1"]}}]
    assert search.body["query"]["bool"]["filter"] == [
        {"term": {"tenant": TENANT}},
        {"bool": {"should": either, "minimum_should_match": 1}},
    ]
    [bulk] = cluster.sent("_bulk")
    assert bulk.bodies == [{"delete": {"_id": "copy-1"}}]


def test_a_memory_deleted_while_it_was_being_indexed_is_deleted_again_later() -> None:
    # Given a memory deleted from the store after its extraction wrote it, before it was indexed
    engine, _ = on_opensearch("aoss")
    memory_id = extracted_memory(engine)
    memory = engine.store.get_memory(TENANT, memory_id)
    assert memory is not None
    engine.store.delete_memory(TENANT, memory_id)
    assert isinstance(engine.queue, ListQueue)
    engine.queue.pop_all()
    # When the extraction's indexing step runs for it (a redelivered job does)
    index_purge.index_written(engine, [memory])
    # Then besides dropping it at once, a second delete is queued for when the upsert shows
    assert [job.memory_ids for job in purges(engine)] == [[memory_id]]
