"""Which memory-bank requests the LangGraph store sends for a batch, against a small in-process
bank (httpx's mock transport): no more than the operations need."""

from __future__ import annotations

import json

import pytest
from langgraph.store.base import GetOp, Item

from memory_engine_client import InvalidRequest, MemoryEngine
from memory_engine_langgraph import MemoryEngineStore
from tests.fakes.memory_bank import FakeBank


def store_over(bank: FakeBank) -> MemoryEngineStore:
    return MemoryEngineStore(
        client=MemoryEngine("http://bank.test", "key", transport=bank.client_transport())
    )


def test_a_put_into_a_new_namespace_registers_it_once() -> None:
    bank = FakeBank()
    store = store_over(bank)

    store.put(("users", "1"), "a", {"text": "first"})
    store.put(("users", "1"), "b", {"text": "second"})

    registrations = [r for r in bank.requests if r.startswith("POST /v1/memories ") and "registry" in r]
    assert len(registrations) == 1


def test_a_put_into_a_namespace_the_store_has_seen_reads_no_registry() -> None:
    bank = FakeBank()
    store = store_over(bank)
    store.put(("users", "1"), "a", {"text": "first"})
    bank.requests.clear()

    store.put(("users", "1"), "a", {"text": "changed"})

    assert [request.split(" ", 2)[:2] for request in bank.requests] == [
        ["POST", "/v1/memories/retrieve"],  # the namespace's items
        ["POST", "/v1/memories"],  # the new version's text to search
        ["POST", "/v1/memories"],  # its record
        ["DELETE", "/v1/memories/20261201_000000_000002"],  # the old record
        ["DELETE", "/v1/memories/20261201_000000_000001"],  # the old text
    ]
    assert "registry" not in bank.requests[0]


def test_only_the_index_text_is_searched_and_the_record_is_kept_beside_it() -> None:
    bank = FakeBank()
    store = store_over(bank)

    store.put(("users", "1"), "diet", {"text": "Allergic to peanuts.", "since": 2019}, index=["text"])

    by_scope = {json.dumps(m["scope"], sort_keys=True): m["fact"] for m in bank.memories.values()}
    assert by_scope['{"langgraph_index": "1", "langgraph_namespace": "users.1"}'] == "Allergic to peanuts."
    record = json.loads(by_scope['{"langgraph_namespace": "users.1"}'])
    assert record["key"] == "diet" and json.loads(record["chunk"]) == {
        "since": 2019,
        "text": "Allergic to peanuts.",
    }


def test_an_item_put_with_index_false_has_no_text_to_search() -> None:
    bank = FakeBank()
    store = store_over(bank)

    store.put(("users", "1"), "raw", {"text": "Allergic to peanuts."}, index=False)

    assert not [m for m in bank.memories.values() if m["scope"].get("langgraph_index")]


def test_gets_of_one_namespace_in_a_batch_share_one_listing() -> None:
    bank = FakeBank()
    store = store_over(bank)
    store.put(("n",), "a", {"text": "A"})
    store.put(("n",), "b", {"text": "B"})
    bank.requests.clear()

    found = store.batch([GetOp(("n",), key) for key in ["a", "b", "missing"]])

    assert [item.key if isinstance(item, Item) else None for item in found] == ["a", "b", None]
    assert len(bank.requests) == 1


def test_a_value_utf8_cannot_encode_is_refused_naming_the_field_before_anything_is_written() -> None:
    # Given a value holding half an emoji (a lone surrogate)
    bank = FakeBank()
    store = store_over(bank)
    # When it is put, Then the caller gets the client's InvalidRequest naming the field, and nothing
    # of the item was written
    with pytest.raises(InvalidRequest, match="UTF-8") as refused:
        store.put(("users", "1"), "note", {"text": "half an emoji \ud83d"})
    assert refused.value.fields == ["fact"]
    assert not [m for m in bank.memories.values() if "langgraph_namespace" in m["scope"]]
