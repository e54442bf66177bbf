"""DynamoDB specifics behind the store contract: item sizes, binary embeddings, tenant-first keys,
and the guarantees of forks longer than one transaction."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws.dynamodb_fork import FORK_LEASE_SECONDS, write_fork
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.engine import Engine
from memory_engine.errors import Conflict
from memory_engine.models.api import MAX_TURN_CHARS, ForkRequest
from memory_engine.models.domain import TurnStatus
from memory_engine.ports import ForkPlan
from memory_engine.usecases import fork
from tests.aws.conftest import AwsCalls
from tests.contract.builders import (
    SESSION,
    TENANT,
    append_turns,
    make_memory,
    make_session,
    make_turn,
    stored_turn,
)
from tests.contract.test_store_limits_contract import incompressible


@pytest.fixture
def store(engine: Engine) -> DynamoDbStore:
    assert isinstance(engine.store, DynamoDbStore)
    return engine.store


def table_items(store: DynamoDbStore) -> list[dict[str, Any]]:
    return list(store.table.scan(ConsistentRead=True))


def long_fork(turns: int = 150, target: str = "fork-x") -> ForkPlan:
    return ForkPlan(
        target=make_session(target, parent=target),
        turns=[make_turn(f"d{i}", session_uuid=target, seq=i) for i in range(turns)],
        memories=[],
    )


def test_a_turn_at_the_size_limit_is_split_so_every_item_stays_under_400_kb(store: DynamoDbStore) -> None:
    big = make_turn("big", query=incompressible(MAX_TURN_CHARS, 1), answer=incompressible(MAX_TURN_CHARS, 2))

    store.append_turn(make_session(), big)

    found = table_items(store)
    assert max(items.item_size(item) for item in found) < items.ITEM_LIMIT_BYTES
    assert [item["kind"]["S"] for item in found].count("part") >= 1


def test_a_buffered_turn_at_the_size_limit_is_written_small_enough_to_be_copied_into_lsi1(
    store: DynamoDbStore,
) -> None:
    # Given a turn at the size limit with a 4096-dimensional vector, waiting in the buffer
    vector = [(i % 512 - 256) / 1024 for i in range(4096)]
    query, answer = incompressible(MAX_TURN_CHARS, 1), incompressible(MAX_TURN_CHARS, 2)
    big = make_turn("big", query=query, answer=answer, embedding=vector)

    # When it is consolidated
    store.append_turn(make_session(), big)

    # Then the turn item the store writes keeps under 180 KB, so it and its whole copy in lsi1
    # together stay under 400 KB, as AWS counts them (moto does not check this; this test does
    # not rely on any backend refusing it)
    [turn] = [item for item in table_items(store) if item["kind"]["S"] == "turn"]
    assert keys.LSI1_SK in turn
    assert items.item_size(turn) <= items.TURN_ITEM_BYTES
    assert 2 * items.item_size(turn) < items.ITEM_LIMIT_BYTES


def test_an_embedding_is_stored_as_float32_binary(store: DynamoDbStore) -> None:
    append_turns(store, make_session(), "d1")
    store.save_memory(make_memory("d1", embedding=[0.5] * 4096))

    [memory] = [item for item in table_items(store) if item["kind"]["S"] == "memory"]

    assert len(bytes(memory["embedding"]["B"])) == 4096 * 4  # 16 KB, not a list of numbers


def test_every_key_starts_with_the_tenant(store: DynamoDbStore) -> None:
    append_turns(store, make_session(), "d1", "d2")
    store.save_memory(make_memory("d1"))
    store.save_characters(TENANT, "thread-1", {"민수": []})
    store.create_fork(long_fork(3))

    for item in table_items(store):
        for key in ("pk", "gsi1pk", "gsi2pk"):
            if key in item:
                assert item[key]["S"].startswith(f"T#{TENANT}#")


def test_tenants_and_sessions_with_hashes_never_share_a_key(store: DynamoDbStore) -> None:
    store.append_turn(make_session("b#S#c", tenant="a"), make_turn("d1", session_uuid="b#S#c", tenant="a"))

    store.append_turn(
        make_session("c", tenant="a#S#b"), make_turn("d1", session_uuid="c", tenant="a#S#b", answer="x")
    )

    assert stored_turn(store, "a", "b#S#c", "d1") == make_turn("d1", session_uuid="b#S#c", tenant="a")
    assert stored_turn(store, "a#S#b", "c", "d1") == make_turn(
        "d1", session_uuid="c", tenant="a#S#b", answer="x"
    )


def test_a_long_fork_is_written_in_several_transactions_with_the_session_in_the_last(
    store: DynamoDbStore, aws_calls: AwsCalls
) -> None:
    sent: list[list[str]] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        sent.append([next(iter(action.values()))["Item"]["sk"]["S"] for action in params["TransactItems"]])

    store.table.client.meta.events.register("provide-client-params.dynamodb.TransactWriteItems", record)

    store.create_fork(long_fork(150))

    assert len(sent) == 2 and all(len(chunk) <= 100 for chunk in sent)
    assert sent[-1][-1] == "SESSION" and all("SESSION" not in chunk for chunk in sent[:-1])


def test_a_fork_refused_half_way_leaves_nothing_of_itself_behind(store: DynamoDbStore) -> None:
    # Given a consolidate that creates the target session while the fork writes its first chunk
    calls: list[int] = []

    def intrude(**_: Any) -> None:
        calls.append(1)
        if len(calls) == 2:  # before the fork's second (last) transaction
            store.append_turn(
                make_session("fork-x", parent="fork-x"), make_turn("other", session_uuid="fork-x")
            )

    store.table.client.meta.events.register(
        "before-call.dynamodb.TransactWriteItems", intrude, unique_id="intrude"
    )

    # When the fork tries to commit
    with pytest.raises(Conflict):
        store.create_fork(long_fork(150))
    store.table.client.meta.events.unregister("before-call.dynamodb.TransactWriteItems", unique_id="intrude")

    # Then only the consolidated turn is there: the fork's written chunk was deleted again
    assert [turn.dialog_uuid for turn in store.list_turns(TENANT, "fork-x")] == ["other"]


def test_a_consolidate_that_meets_a_turn_of_an_unfinished_fork_is_a_conflict(store: DynamoDbStore) -> None:
    # Given a fork interrupted after its first chunk (its turns are there, its session is not)
    plan = long_fork(150)
    write_fork_first_chunk_only(store, plan)

    # When a client consolidates one of those dialog uuids into the target session
    with pytest.raises(Conflict, match="fork"):
        store.append_turn(plan.target, make_turn("d3", session_uuid="fork-x"))

    # Then nothing was claimed: the session still does not exist
    assert store.get_session(TENANT, "fork-x") is None


def test_a_fork_into_a_target_being_written_is_a_conflict_until_the_lease_ends(store: DynamoDbStore) -> None:
    plan = long_fork(150)
    started = write_fork_first_chunk_only(store, plan)

    with pytest.raises(Conflict, match="being written"):
        write_fork(store.table, plan, now=started + 60)

    write_fork(store.table, plan, now=started + FORK_LEASE_SECONDS + 1)
    assert [t.seq for t in store.list_turns(TENANT, "fork-x")] == list(range(150))
    assert all(t.status is TurnStatus.BUFFERED for t in store.buffered_turns(TENANT, "fork-x"))


def test_a_fork_retried_over_its_own_unfinished_chunks_is_a_conflict_as_before(
    engine: Engine, store: DynamoDbStore
) -> None:
    # Given a 150-turn session and a fork of it killed after its first chunk (no session item)
    append_turns(store, make_session(), *(f"d{i}" for i in range(150)))
    request = ForkRequest(
        source_session_uuid=SESSION, target_session_uuid="fork-x", cutoff_dialog_uuid="d149"
    )
    with killed_after_first_transaction(store):
        fork.run(engine, TENANT, request)

    # When the client retries the same fork within the lease
    with pytest.raises(Conflict, match="being written"):
        fork.run(engine, TENANT, request)

    # Then the target is still not there: only a fork written to its end counts as one to finish
    assert store.get_session(TENANT, "fork-x") is None


def write_fork_first_chunk_only(store: DynamoDbStore, plan: ForkPlan) -> float:
    """Simulate a fork that died after its first transaction; returns when it started."""
    started = 1_000_000.0
    with killed_after_first_transaction(store):
        write_fork(store.table, plan, now=started)
    return started


@contextmanager
def killed_after_first_transaction(store: DynamoDbStore) -> Iterator[None]:
    """The block's second TransactWriteItems kills it (SystemExit skips the fork's clean-up, as a
    killed process would)."""
    calls: list[int] = []

    def die_on_second(**_: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise SystemExit("the function was killed")

    events = store.table.client.meta.events
    events.register("before-call.dynamodb.TransactWriteItems", die_on_second, unique_id="die")
    try:
        with pytest.raises(SystemExit):
            yield
    finally:
        events.unregister("before-call.dynamodb.TransactWriteItems", unique_id="die")
