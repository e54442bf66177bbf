"""A memory-bank fact is found the moment its create answered, even on an index that shows writes
late (OpenSearch: Serverless 10-30 s): searches read the scope's facts younger than the index's
settle time from the store. One fake clock drives the engine and the index; nothing sleeps.

Every test runs once per store/queue backend (`ENGINE_BACKENDS`): locally and on DynamoDB/SQS (moto)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from memory_engine.engine import Engine
from memory_engine.models.bank import CreateMemoryRequest, RetrieveMemoriesRequest
from memory_engine.models.domain import scope_key
from memory_engine.models.messages import IndexPurgeJob
from memory_engine.usecases import bank, bank_retrieve, facts
from memory_engine_app.settling_index import SettlingIndex
from tests.fakes.engine import ENGINE_BACKENDS, peek_jobs, run_worker
from tests.fakes.ports import SetClock

TENANT = "acme"
SCOPE = {"user_id": "123", "app": "rpg"}
SETTLE = 60.0


@dataclasses.dataclass
class Settling:
    engine: Engine
    index: SettlingIndex
    clock: SetClock


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def settling(request: pytest.FixtureRequest) -> Iterator[Settling]:
    with ENGINE_BACKENDS[request.param]() as engine:
        clock = SetClock()
        index = SettlingIndex(engine.index, SETTLE, clock=lambda: clock.at.timestamp())
        yield Settling(dataclasses.replace(engine, index=index, clock=clock), index, clock)


def create(engine: Engine, fact: str) -> str:
    return bank.create(engine, TENANT, CreateMemoryRequest(fact=fact, scope=SCOPE)).name


def similar(engine: Engine, query: str, **params: Any) -> list[str]:
    request = RetrieveMemoriesRequest.model_validate(
        {"scope": SCOPE, "similarity_search_params": {"search_query": query, **params}}
    )
    return [hit.memory.fact for hit in bank_retrieve.run(engine, TENANT, request).retrieved_memories]


def test_a_fact_is_found_by_similarity_the_moment_it_was_created(settling: Settling) -> None:
    # Given a fact just created, not yet searchable in the index
    create(settling.engine, "My favourite colour is teal.")
    assert settling.index.pending == 1

    # When the scope is searched at once
    found = similar(settling.engine, "Which colour do I like?")

    # Then the fact is found, read from the store
    assert found == ["My favourite colour is teal."]


def test_young_and_settled_facts_are_ranked_together_by_distance(settling: Settling) -> None:
    # Given a fact the index shows (written a settle time ago) and one it does not show yet
    create(settling.engine, "I live in Lisbon near the river.")
    settling.clock.advance(SETTLE + 1)
    create(settling.engine, "My favourite colour is teal.")

    # When the scope is searched
    found = similar(settling.engine, "my favourite colour is teal", top_k=2)

    # Then both are there, the closer first
    assert found == ["My favourite colour is teal.", "I live in Lisbon near the river."]
    assert settling.index.pending == 1  # the older one came from the index, the young one from the store


def test_a_fact_deleted_before_the_index_settled_stays_gone_after_it(settling: Settling) -> None:
    # Given a fact created and deleted before the index showed it (the delete misses its copy)
    name = create(settling.engine, "My favourite colour is teal.")
    bank.delete(settling.engine, TENANT, name.removeprefix("memories/"))

    # When the index settles and the scope is searched
    settling.clock.advance(SETTLE + 1)
    found = similar(settling.engine, "Which colour do I like?")

    # Then the fact is not found, and the index's late copy has a second delete queued for it
    assert found == []
    assert any(isinstance(job, IndexPurgeJob) for job in peek_jobs(settling.engine))
    run_worker(settling.engine)
    vector = settling.engine.embedder.embed(["teal"])[0]
    assert settling.engine.index.search(TENANT, [scope_key(SCOPE)], "", vector, 5) == []


def test_facts_older_than_the_settle_time_are_not_read_from_the_store(settling: Settling) -> None:
    # Given a fact written more than a settle time ago
    create(settling.engine, "My favourite colour is teal.")
    settling.clock.advance(SETTLE + 1)

    # When the young facts of its scope are asked for
    young = facts.young(settling.engine, TENANT, scope_key(SCOPE))

    # Then there are none: the index answers for it
    assert young == []


def test_an_index_that_shows_writes_at_once_reads_no_young_facts(settling: Settling) -> None:
    # Given the same engine on an index with no settle time
    engine = dataclasses.replace(settling.engine, index=settling.index.inner)
    create(engine, "My favourite colour is teal.")

    # Then nothing is read from the store for young facts, and the fact is found all the same
    assert facts.young(engine, TENANT, scope_key(SCOPE)) == []
    assert similar(engine, "Which colour do I like?") == ["My favourite colour is teal."]
