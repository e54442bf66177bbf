"""LangGraph's own store behaviours (those of its test suite, langgraph's libs/checkpoint/tests/
test_store.py, that apply to a store with an index), asserted alike on LangGraph's InMemoryStore
and on MemoryEngineStore over an in-process memory bank that embeds with the same function: the
same items give the same answers, rankings included."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.store.base import BaseStore, InvalidNamespaceError, PutOp
from langgraph.store.memory import InMemoryStore

from memory_engine_client import AsyncMemoryEngine, MemoryEngine, TransportError
from memory_engine_langgraph import MemoryEngineStore
from tests.fakes.memory_bank import DIMS, FakeBank, embed_many

Factory = Callable[..., BaseStore]


def in_memory(fields: list[str] | None = None) -> BaseStore:
    index: dict[str, Any] = {"dims": DIMS, "embed": embed_many}
    if fields is not None:
        index["fields"] = fields
    return InMemoryStore(index=index)  # type: ignore[arg-type]


def memory_engine(fields: list[str] | None = None) -> BaseStore:
    bank = FakeBank()
    client = MemoryEngine("http://bank.test", "key", transport=bank.client_transport())
    async_client = AsyncMemoryEngine("http://bank.test", "key", transport=bank.client_transport())
    index = {"fields": fields} if fields is not None else None
    return MemoryEngineStore(index=index, client=client, async_client=async_client)


STORES = pytest.mark.parametrize(
    "make", [in_memory, memory_engine], ids=["InMemoryStore", "MemoryEngineStore"]
)


def put_all(store: BaseStore, namespaces: list[tuple[str, ...]]) -> None:
    for i, ns in enumerate(namespaces):
        store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})


@STORES
def test_namespaces_are_listed_by_prefix_suffix_wildcard_and_depth(make: Factory) -> None:
    # Given items in namespaces of several depths
    store = make()
    put_all(
        store,
        [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
         ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"), ("admin", "users", "789")],
    )  # fmt: skip
    # When they are listed with each kind of condition, Then each lists what LangGraph's does
    assert sorted(store.list_namespaces(prefix=("a", "b"))) == [
        ("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [
        ("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f"),
    ]  # fmt: skip
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]


@STORES
def test_namespaces_page_in_order_and_an_empty_store_lists_none(make: Factory) -> None:
    store = make()
    assert store.list_namespaces() == []
    put_all(store, [("namespace", f"sub_{i:02d}") for i in range(12)])

    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=5) == [
        ("namespace", f"sub_{i:02d}") for i in range(5, 10)
    ]


@STORES
def test_an_empty_or_dotted_or_reserved_namespace_is_refused(make: Factory) -> None:
    store = make()

    for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "foo", {"foo": "bar"})
    store.put(("foo", "langgraph", "foo"), "bar", {"foo": "bar"})
    assert store.search(("foo", "langgraph", "foo"))[0].value == {"foo": "bar"}


@STORES
def test_a_put_is_read_back_updated_and_deleted(make: Factory) -> None:
    store = make()
    store.put(("docs",), "k", {"text": "first"})
    store.put(("docs",), "k", {"text": "second"})
    read = store.get(("docs",), "k")

    store.delete(("docs",), "k")

    assert read is not None and read.value == {"text": "second"}
    assert store.get(("docs",), "k") is None and store.search(("docs",)) == []


DOCS = [
    ("doc1", {"text": "short text"}),
    ("doc2", {"text": "longer text document"}),
    ("doc3", {"text": "longest text document here"}),
    ("doc4", {"description": "text in description field"}),
    ("doc5", {"content": "text in content field"}),
    ("doc6", {"body": "text in body field"}),
]


def ranked(store: BaseStore, query: str, **options: Any) -> list[tuple[str, float | None]]:
    return [
        (hit.key, None if hit.score is None else round(hit.score, 6))
        for hit in store.search(("test",), query=query, **options)
    ]


@pytest.mark.parametrize("fields", [None, ["text"], ["text", "description"]])
@pytest.mark.parametrize("query", ["long text", "description field", "body"])
def test_a_query_ranks_the_items_as_langgraphs_in_memory_store_does(
    fields: list[str] | None, query: str
) -> None:
    # Given the same items in both stores, indexing the same fields
    mine, theirs = memory_engine(fields), in_memory(fields)
    for store in (mine, theirs):
        for key, value in DOCS:
            store.put(("test",), key, value)
    # When the same query is searched in each, Then the keys come back in the same order with the same scores
    assert ranked(mine, query, limit=10) == ranked(theirs, query, limit=10)


def test_an_item_put_with_index_false_is_never_ranked_by_meaning_and_fills_the_page_last() -> None:
    mine, theirs = memory_engine(), in_memory()
    for store in (mine, theirs):
        store.put(("test",), "hidden", {"text": "long text exactly"}, index=False)
        for key, value in DOCS[:2]:
            store.put(("test",), key, value)

    found = ranked(mine, "long text exactly", limit=10)

    assert found == ranked(theirs, "long text exactly", limit=10)
    assert found[-1] == ("hidden", None) and all(score is not None for _, score in found[:-1])


def test_the_index_fields_of_a_put_override_the_stores() -> None:
    mine, theirs = memory_engine(["text"]), in_memory(["text"])
    for store in (mine, theirs):
        store.put(("test",), "a", {"text": "apples", "note": "bananas"}, index=["note"])
        store.put(("test",), "b", {"text": "bananas", "note": "apples"})

    assert ranked(mine, "bananas") == ranked(theirs, "bananas")
    # both are found by exactly "bananas": a by its note (the put's own index), b by its text
    assert {key for key, score in ranked(mine, "bananas") if score is not None and score > 0.999} == {
        "a",
        "b",
    }


def test_updating_an_item_updates_what_finds_it() -> None:
    mine, theirs = memory_engine(), in_memory()
    for store in (mine, theirs):
        store.put(("test",), "doc", {"text": "the cat sat on the mat"})
        store.put(("test",), "other", {"text": "a rocket to the moon"})
        store.put(("test",), "doc", {"text": "a rocket launch at dawn"})

    assert ranked(mine, "rocket launch") == ranked(theirs, "rocket launch")


@STORES
def test_a_search_without_a_query_lists_items_in_the_order_they_were_put(make: Factory) -> None:
    store = make()
    for key, value in DOCS:
        store.put(("test",), key, value)
    store.put(("test",), "doc1", {"text": "changed, keeps its place"})

    assert [hit.key for hit in store.search(("test",), limit=4, offset=1)] == ["doc2", "doc3", "doc4", "doc5"]
    assert store.search(("test",))[0].key == "doc1"


@STORES
def test_a_filter_keeps_the_items_whose_values_match(make: Factory) -> None:
    store = make()
    for n in range(5):
        store.put(("test",), f"k{n}", {"n": n, "kind": "even" if n % 2 == 0 else "odd"})

    found = store.search(("test",), filter={"kind": "even", "n": {"$gt": 0}})

    assert [hit.key for hit in found] == ["k2", "k4"]


@STORES
def test_puts_of_one_batch_keep_the_last_per_key(make: Factory) -> None:
    store = make()

    store.batch([PutOp(("test",), "key", {"value": 1}), PutOp(("test",), "key", {"value": 2})])

    item = store.get(("test",), "key")
    assert item is not None and item.value == {"value": 2}


@STORES
def test_the_async_methods_answer_as_the_sync_ones(make: Factory) -> None:
    store = make()

    async def work() -> Any:
        await store.aput(("test",), "k", {"text": "async text"})
        return await store.aget(("test",), "k"), await store.asearch(("test",), query="async")

    got, found = asyncio.run(work())

    assert got.value == {"text": "async text"} and [hit.key for hit in found] == ["k"]


def test_a_value_larger_than_one_fact_is_stored_and_read_whole() -> None:
    store = memory_engine()
    value = {"text": "long notes " * 4_000, "list": list(range(2_000))}  # ~54,000 characters

    store.put(("test",), "big", value)

    item = store.get(("test",), "big")
    assert item is not None and item.value == value


def test_a_value_past_the_stores_limit_is_refused_naming_its_size() -> None:
    store = memory_engine()

    with pytest.raises(ValueError, match="characters as JSON"):
        store.put(("test",), "huge", {"text": "x" * 200_000}, index=False)


def test_url_and_key_may_be_given_positionally() -> None:
    # Given a store made as MemoryEngineStore(url, key), the URL one where nothing listens
    store = MemoryEngineStore("http://127.0.0.1:9", "the-key")
    # When it is used, Then it reached for that URL (a client error naming it, not a crash)
    with pytest.raises(TransportError, match="could not connect"):
        store.put(("test",), "k", {"text": "hello"})
