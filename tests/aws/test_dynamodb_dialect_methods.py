"""DynamoDB specifics of what the API dialects added to the store: the gsi3 keys that list a
thread's memories, updates racing deletes, and deleting a session longer than one transaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.engine import Engine
from memory_engine.models.domain import MemoryFields
from tests.aws.test_dynamodb_store import long_fork, table_items
from tests.contract.builders import (
    TENANT,
    make_fork_plan,
    make_memory,
    make_session,
    make_turn,
)

FACT_THREAD = "scope:" + "a" * 40


@pytest.fixture
def store(engine: Engine) -> DynamoDbStore:
    assert isinstance(engine.store, DynamoDbStore)
    return engine.store


def make_fact(memory_id: str | None = None) -> Any:
    extra = {"memory_id": memory_id} if memory_id else {}
    return make_memory(session_uuid="", parent=FACT_THREAD, scope={"user_id": "1"}, **extra)


def on_transaction(store: DynamoDbStore, number: int, act: Callable[[], None]) -> None:
    """Run `act` just before the store's `number`-th TransactWriteItems call (1-based), once."""
    calls: list[int] = []

    def hook(**_: Any) -> None:
        calls.append(1)
        if len(calls) == number:
            act()

    store.table.client.meta.events.register("before-call.dynamodb.TransactWriteItems", hook)


def drop_item(store: DynamoDbStore, pk: str, sk: str) -> None:
    store.table.client.delete_item(TableName=store.table.name, Key=keys.key(pk, sk))


def test_every_memory_item_carries_its_threads_gsi3_keys_new_forked_or_updated(store: DynamoDbStore) -> None:
    # Given a forked copy of a memory, a new fact and an updated one
    plan = make_fork_plan()
    store.create_fork(plan)
    [copy] = plan.memories
    new, updated = make_fact(), make_fact()
    store.save_memory(new)
    store.save_memory(updated)
    store.update_memory(updated.model_copy(update={"fields": MemoryFields(summary="changed")}))

    # Then each memory item is keyed in gsi3 by its tenant's thread and its id
    found = {
        item["memory_id"]["S"]: (item[keys.GSI3_PK]["S"], item[keys.GSI3_SK]["S"])
        for item in table_items(store)
        if item["kind"]["S"] == "memory"
    }
    assert found == {
        copy.memory_id: (keys.thread_pk(TENANT, plan.target.parent_session_uuid), copy.memory_id),
        new.memory_id: (keys.thread_pk(TENANT, FACT_THREAD), new.memory_id),
        updated.memory_id: (keys.thread_pk(TENANT, FACT_THREAD), updated.memory_id),
    }


def test_a_fact_writes_no_memory_reference(store: DynamoDbStore) -> None:
    store.save_memory(make_fact())

    assert [item["kind"]["S"] for item in table_items(store)] == ["memory"]


def test_a_memory_deleted_after_the_index_listed_it_is_skipped_and_the_page_still_filled(
    store: DynamoDbStore,
) -> None:
    # Given four facts of a thread, and an index that still lists the second after it is deleted
    facts = [make_fact(f"20260318_0400{n:02d}_abcdef") for n in range(4)]
    for fact in facts:
        store.save_memory(fact)
    batch_get = store.table.batch_get

    def stale_index(item_keys: Any, attributes: Any = ()) -> Any:
        drop_item(store, keys.memory_pk(TENANT, facts[1].memory_id), keys.MEMORY_SK)
        return batch_get(item_keys, attributes)

    store.table.batch_get = stale_index  # type: ignore[method-assign]

    # When a page of three is listed
    page = store.list_thread_memories(TENANT, FACT_THREAD, limit=3)

    # Then it holds the three facts still stored, in id order
    assert [m.memory_id for m in page] == [facts[0].memory_id, facts[2].memory_id, facts[3].memory_id]


def test_an_update_racing_a_delete_writes_nothing_and_answers_false(store: DynamoDbStore) -> None:
    fact = make_fact()
    store.save_memory(fact)
    on_transaction(store, 1, lambda: drop_item(store, keys.memory_pk(TENANT, fact.memory_id), keys.MEMORY_SK))

    assert store.update_memory(fact.model_copy(update={"fields": MemoryFields(summary="late")})) is False

    assert store.get_memory(TENANT, fact.memory_id) is None


def test_a_long_session_is_deleted_in_transactions_of_100_with_the_session_last(store: DynamoDbStore) -> None:
    store.create_fork(long_fork(150))
    sent: list[list[str]] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        sent.append([next(iter(action.values()))["Key"]["sk"]["S"] for action in params["TransactItems"]])

    store.table.client.meta.events.register("provide-client-params.dynamodb.TransactWriteItems", record)

    outcome = store.delete_session(TENANT, "fork-x")

    assert len(outcome.deleted_dialogs) == 150
    assert len(sent) == 2 and all(len(chunk) <= 100 for chunk in sent)
    assert sent[-1][-1] == keys.SESSION_SK and all(keys.SESSION_SK not in chunk for chunk in sent[:-1])
    assert table_items(store) == []


def test_a_turn_consolidated_while_its_session_is_deleted_goes_with_it(store: DynamoDbStore) -> None:
    # Given a consolidate that lands between the delete's first and last transactions
    store.create_fork(long_fork(150))
    target = make_session("fork-x", parent="fork-x")
    on_transaction(store, 2, lambda: store.append_turn(target, make_turn("late", session_uuid="fork-x")))

    # When the session is deleted
    outcome = store.delete_session(TENANT, "fork-x")

    # Then the late turn went too, and nothing of the session is left
    assert outcome.deleted_dialogs[-1] == "late" and len(outcome.deleted_dialogs) == 151
    assert store.get_session(TENANT, "fork-x") is None
    assert table_items(store) == []


def test_an_interrupted_session_delete_leaves_a_live_session_that_the_next_call_finishes(
    store: DynamoDbStore,
) -> None:
    # Given a delete killed after its first transaction (SystemExit, as a killed process)
    store.create_fork(long_fork(150))

    def die() -> None:
        raise SystemExit("the function was killed")

    on_transaction(store, 2, die)
    with pytest.raises(SystemExit):
        store.delete_session(TENANT, "fork-x")

    # Then the session is still there with the turns not yet deleted
    assert store.get_session(TENANT, "fork-x") is not None
    left = [turn.dialog_uuid for turn in store.list_turns(TENANT, "fork-x")]
    assert 0 < len(left) < 150

    # And the next delete finishes the job
    assert store.delete_session(TENANT, "fork-x").deleted_dialogs == left
    assert table_items(store) == []
