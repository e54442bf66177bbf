"""Facts that expire: asked for at creation (`expires_at` or `ttl_seconds`), never returned once
expired, then removed by the sweep with the cascade of a delete (store and index).

Every test runs once per store/queue backend (`ENGINE_BACKENDS`), on a clock the test moves: the
engine's and its store's, never a sleep."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput, NotFound
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.models.bank import CreateMemoryRequest, RetrieveMemoriesRequest
from memory_engine.usecases import bank, bank_retrieve, consolidate, retrieve, sweep
from tests.fakes.engine import run_worker
from tests.fakes.ports import SetClock

TENANT = "acme"
SCOPE = {"user_id": "123"}
HOUR = 3600


def create(engine: Engine, fact: str, **expiry: object) -> str:
    request = CreateMemoryRequest.model_validate({"fact": fact, "scope": SCOPE, **expiry})
    return bank.create(engine, TENANT, request).name.removeprefix("memories/")


def similar(engine: Engine, query: str) -> list[str]:
    request = RetrieveMemoriesRequest.model_validate(
        {"scope": SCOPE, "similarity_search_params": {"search_query": query, "top_k": 10}}
    )
    return [hit.memory.fact for hit in bank_retrieve.run(engine, TENANT, request).retrieved_memories]


def listed(engine: Engine) -> list[str]:
    request = RetrieveMemoriesRequest.model_validate({"scope": SCOPE, "simple_retrieval_params": {}})
    return [hit.memory.fact for hit in bank_retrieve.run(engine, TENANT, request).retrieved_memories]


def test_a_fact_created_with_a_ttl_shows_when_it_expires(engine: Engine, clock: SetClock) -> None:
    memory_id = create(engine, "The user is in Busan this week.", ttl_seconds=HOUR)

    shown = bank.get(engine, TENANT, memory_id)

    assert shown.expireTime == (clock.now() + timedelta(seconds=HOUR)).isoformat().replace(
        "+00:00", ".000000Z"
    )
    assert "expireTime" in shown.model_dump()


def test_a_fact_without_expiry_shows_no_expire_time(engine: Engine) -> None:
    memory_id = create(engine, "The user plays the cello.")

    assert "expireTime" not in bank.get(engine, TENANT, memory_id).model_dump()


def test_an_expired_fact_is_never_returned_before_the_sweep_removes_it(
    engine: Engine, clock: SetClock
) -> None:
    # Given a fact that expires in an hour beside one that never does
    temporary = create(
        engine, "The user is in Busan this week.", expires_at=(clock.now() + timedelta(hours=1)).isoformat()
    )
    create(engine, "The user lives in Seoul.")
    assert sorted(listed(engine)) == ["The user is in Busan this week.", "The user lives in Seoul."]

    # When the hour has passed, and no sweep has run
    clock.advance(HOUR)

    # Then no read returns it: get, similarity search, listing
    with pytest.raises(NotFound):
        bank.get(engine, TENANT, temporary)
    assert similar(engine, "Where is the user this week? Busan") == ["The user lives in Seoul."]
    assert listed(engine) == ["The user lives in Seoul."]


def test_the_sweep_removes_expired_facts_from_store_and_index(engine: Engine, clock: SetClock) -> None:
    temporary = create(engine, "The user is in Busan this week.", ttl_seconds=HOUR)
    kept = create(engine, "The user lives in Seoul.", ttl_seconds=10 * HOUR)
    clock.advance(HOUR)

    removed = sweep.expire(engine)

    assert removed == [(TENANT, temporary)]
    assert engine.store.expired_memories(clock.now(), 10) == []
    thread = engine.store.get_memory(TENANT, kept)
    assert thread is not None
    hits = engine.index.search(TENANT, [thread.parent_session_uuid], "Busan Seoul user", [], 10)
    assert {hit.doc_id for hit in hits} == {kept}
    assert sweep.expire(engine) == []  # nothing left to remove: a second sweep is a no-op


def test_the_sweep_run_removes_expired_facts_too(engine: Engine, clock: SetClock) -> None:
    temporary = create(engine, "The user is in Busan this week.", ttl_seconds=HOUR)
    clock.advance(2 * HOUR)

    sweep.run(engine)

    assert engine.store.expired_memories(clock.now(), 10) == []
    with pytest.raises(NotFound):
        bank.get(engine, TENANT, temporary)


def test_an_expiry_in_the_past_is_refused_naming_the_field(engine: Engine, clock: SetClock) -> None:
    past = (clock.now() - timedelta(seconds=1)).isoformat()

    with pytest.raises(InvalidInput) as refused:
        create(engine, "The user is in Busan.", expires_at=past)

    assert "expires_at" in str(refused.value)
    assert listed(engine) == []


@pytest.mark.parametrize(
    ("expiry", "field"),
    [
        ({"expires_at": "2030-01-01T00:00:00Z", "ttl_seconds": 60}, "not both"),
        ({"ttl_seconds": 0}, "ttl_seconds"),
        ({"ttl_seconds": 10**12}, "ttl_seconds"),
        ({"ttl_seconds": "60"}, "ttl_seconds"),
        ({"expires_at": 1893456000}, "expires_at"),
        ({"expires_at": "next tuesday"}, "expires_at"),
        ({"expires_at": "0001-01-01T00:00:00+01:00"}, "expires_at"),
        ({"expires_at": "9999-12-31T23:59:59Z"}, "expires_at"),
    ],
)
def test_bad_expiry_fields_are_refused_naming_them(expiry: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        CreateMemoryRequest.model_validate({"fact": "A fact.", "scope": SCOPE, **expiry})

    assert field in str(refused.value)


def say(engine: Engine, uuid: str, query: str, **options: object) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": uuid, "query": query, "answer": "I see."},
            "options": options,
        }
    )
    consolidate.run(engine, TENANT, request)


def thread_hits(engine: Engine, query: str) -> list[str]:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": query}}
    )
    return [hit.kind for hit in retrieve.run(engine, TENANT, request).data]


def test_a_threads_memory_of_turns_sent_with_a_ttl_expires_after_the_shortest(
    engine: Engine, clock: SetClock
) -> None:
    # Given two turns sent with memory TTLs of two hours and one hour, extracted into one memory
    say(engine, "d1", "I am in Busan this week for a conference.", memory_ttl_seconds=2 * HOUR)
    say(engine, "d2", "The conference hotel is by the beach.", memory_ttl_seconds=HOUR, force_summary=True)
    (memory,) = run_worker(engine)
    stored = engine.store.get_memory(TENANT, memory.memory_id)
    assert stored is not None and stored.expires_at == stored.created_at + timedelta(seconds=HOUR)
    assert "memory" in thread_hits(engine, "Busan conference hotel")

    # When the hour has passed
    clock.advance(HOUR)

    # Then retrieve no longer returns it, and the sweep removes it; the turns stay as history
    assert "memory" not in thread_hits(engine, "Busan conference hotel")
    assert sweep.expire(engine) == [(TENANT, memory.memory_id)]
    assert {turn.status.value for turn in engine.store.list_turns(TENANT, "s1")} == {"forgotten"}


def test_a_memory_of_turns_without_a_ttl_does_not_expire(engine: Engine) -> None:
    say(engine, "d1", "I live in Seoul.", force_summary=True)

    (memory,) = run_worker(engine)

    stored = engine.store.get_memory(TENANT, memory.memory_id)
    assert stored is not None and stored.expires_at is None


def test_a_memory_ttl_out_of_bounds_is_refused_naming_it() -> None:
    with pytest.raises(ValidationError) as refused:
        ConsolidateRequest.model_validate(
            {
                "session_uuid": "s1",
                "parent_session_uuid": "t",
                "new_dialog": {"uuid": "d1", "query": "q"},
                "options": {"memory_ttl_seconds": 0},
            }
        )

    assert "memory_ttl_seconds" in str(refused.value)


def test_a_failure_to_remove_expired_memories_never_stops_the_buffers_sweep(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_engine.errors import Unavailable

    # Given a session whose buffer is full, and a store that cannot list what expired
    for n in range(engine.limits.extraction_threshold):
        say(engine, f"d{n}", f"Turn number {n}.")

    def unavailable(*_: object) -> list[tuple[str, str]]:
        raise Unavailable("The store is unavailable.")

    monkeypatch.setattr(engine.store, "expired_memories", unavailable)

    # When the sweep runs, then it still queues the session's extraction
    assert [(job.tenant, job.session_uuid) for job in sweep.run(engine)] == [(TENANT, "s1")]
