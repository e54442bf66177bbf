"""`MemoryEngineStore`, LangGraph's BaseStore over the memory bank, against a running local server:
the behaviours LangGraph documents for its stores (put then get, update, delete, search by meaning
and by value, namespaces isolated and listed), sync and async, and a graph that remembers in one
run and recalls in a later one; and the same items ranked as LangGraph's InMemoryStore ranks them
when it embeds with the engine's model. (LangGraph ships no store conformance suite to reuse:
langgraph-checkpoint-conformance covers checkpointers only; its own store tests' behaviours run
against both stores in tests/unit/test_langgraph_behaviours.py.)"""

from __future__ import annotations

import asyncio
import uuid
from typing import TypedDict

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import GetOp, Item, PutOp

from memory_engine_client import AsyncMemoryEngine
from memory_engine_langgraph import MemoryEngineStore
from memory_engine_langgraph.mapping import scope_of
from tests.e2e.conftest import API_KEY, LocalServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def store(server: LocalServer) -> MemoryEngineStore:
    return MemoryEngineStore(server.url, API_KEY)


@pytest.fixture
def root() -> str:
    """A namespace root of the test's own, so tests never see each other's items."""
    return f"lg{uuid.uuid4().hex[:10]}"


def test_an_item_put_is_got_back_with_its_value_and_times(store: MemoryEngineStore, root: str) -> None:
    store.put((root, "prefs"), "theme", {"text": "The user prefers dark mode.", "strength": 3})

    item = store.get((root, "prefs"), "theme")

    assert item is not None
    assert (item.namespace, item.key) == ((root, "prefs"), "theme")
    assert item.value == {"text": "The user prefers dark mode.", "strength": 3}
    assert item.created_at <= item.updated_at


def test_a_second_put_replaces_the_value_and_keeps_the_creation_time(
    store: MemoryEngineStore, server: LocalServer, root: str
) -> None:
    store.put((root,), "city", {"text": "Lives in Lisbon."})
    first = store.get((root,), "city")

    store.put((root,), "city", {"text": "Moved to Porto."})
    second = store.get((root,), "city")

    assert first is not None and second is not None
    assert second.value == {"text": "Moved to Porto."}
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    assert len(server.client().bank_list_all(scope_of((root,)))) == 1, "the old version is deleted"


def test_a_deleted_item_is_gone(store: MemoryEngineStore, root: str) -> None:
    store.put((root,), "tmp", {"text": "Scratch note."})

    store.delete((root,), "tmp")

    assert store.get((root,), "tmp") is None
    assert store.search((root,)) == []


def test_search_by_query_ranks_the_matching_item_first(store: MemoryEngineStore, root: str) -> None:
    memories = {
        "diet": {"text": "The user is allergic to peanuts and shellfish."},
        "music": {"text": "The user plays the cello in an orchestra."},
        "travel": {"text": "The user is flying to Reykjavik in March."},
        "diet-ko": {"text": "사용자는 땅콩 알레르기가 있다."},
    }
    for key, value in memories.items():
        store.put((root, "facts"), key, value)

    found = store.search((root,), query="Which instrument does the user play?", limit=3)
    found_ko = store.search((root,), query="땅콩을 먹어도 돼?", limit=2)

    assert found[0].key == "music" and len(found) == 3
    assert [hit.score for hit in found] == sorted((hit.score or 0.0 for hit in found), reverse=True)
    assert found_ko[0].key in {"diet-ko", "diet"}


def test_search_by_filter_returns_only_matching_values_in_the_order_they_were_put(
    store: MemoryEngineStore, root: str
) -> None:
    for n in range(4):
        store.put((root,), f"task-{n}", {"text": f"Task {n}", "done": n % 2 == 0, "priority": n})

    done = store.search((root,), filter={"done": True})
    urgent = store.search((root,), filter={"priority": {"$gte": 2}}, limit=1)

    assert [item.key for item in done] == ["task-0", "task-2"]
    assert [item.key for item in urgent] == ["task-2"]
    assert all(item.score is None for item in done)


def test_namespaces_are_isolated_and_a_prefix_search_covers_the_ones_below(
    store: MemoryEngineStore, root: str
) -> None:
    store.put((root, "alice"), "pet", {"text": "Alice has a cat called Mochi."})
    store.put((root, "bob"), "pet", {"text": "Bob has a dog called Rex."})

    alice, bob = store.get((root, "alice"), "pet"), store.get((root, "bob"), "pet")
    only_bob = store.search((root, "bob"), query="cat")
    everyone = store.search((root,), query="pets")

    assert alice is not None and bob is not None and alice.value != bob.value
    assert [item.namespace for item in only_bob] == [(root, "bob")]
    assert {item.namespace for item in everyone} == {(root, "alice"), (root, "bob")}


def test_list_namespaces_by_prefix_suffix_and_depth(store: MemoryEngineStore, root: str) -> None:
    for namespace in [(root, "users", "1"), (root, "users", "2"), (root, "teams", "1")]:
        store.put(namespace, "k", {"text": "x"})

    assert store.list_namespaces(prefix=(root, "users")) == [(root, "users", "1"), (root, "users", "2")]
    assert store.list_namespaces(prefix=(root,), suffix=("1",)) == [
        (root, "teams", "1"),
        (root, "users", "1"),
    ]
    assert store.list_namespaces(prefix=(root,), max_depth=2) == [(root, "teams"), (root, "users")]
    assert store.list_namespaces(prefix=(root, "*", "2")) == [(root, "users", "2")]


def test_the_reads_of_a_batch_see_the_store_before_its_writes(store: MemoryEngineStore, root: str) -> None:
    store.put((root,), "k", {"text": "old"})

    before, _, after = store.batch(
        [GetOp((root,), "k"), PutOp((root,), "k", {"text": "new"}), GetOp((root,), "k")]
    )

    assert isinstance(before, Item) and isinstance(after, Item)
    assert (before.value, after.value) == ({"text": "old"}, {"text": "old"})
    assert (got := store.get((root,), "k")) is not None and got.value == {"text": "new"}


def test_the_async_methods_put_get_search_and_delete(server: LocalServer, root: str) -> None:
    async def work() -> tuple[object, list[str], object]:
        async with AsyncMemoryEngine(server.url, API_KEY) as client:
            store = MemoryEngineStore(async_client=client)
            await store.aput((root, "a"), "x", {"text": "An async note about gardening."})
            await store.aput((root, "b"), "y", {"text": "Another async note about sailing."})
            got = await store.aget((root, "a"), "x")
            found = [item.key for item in await store.asearch((root,), query="boats and sailing")]
            await store.adelete((root, "a"), "x")
            return got, found, await store.aget((root, "a"), "x")

    got, found, gone = asyncio.run(work())

    assert got is not None and found[0] == "y" and gone is None


class Chat(TypedDict):
    user: str
    message: str
    recalled: list[str]


def remember_or_recall(state: Chat, runtime: Runtime[None]) -> dict[str, list[str]]:
    """A node: "remember: ..." stores the rest under the user's namespace; anything else recalls."""
    assert runtime.store is not None
    namespace = ("memories", state["user"])
    if state["message"].startswith("remember: "):
        runtime.store.put(namespace, uuid.uuid4().hex, {"text": state["message"].removeprefix("remember: ")})
        return {"recalled": []}
    return {
        "recalled": [item.value["text"] for item in runtime.store.search(namespace, query=state["message"])]
    }


def test_a_graph_remembers_in_one_run_and_recalls_in_a_later_one(server: LocalServer, root: str) -> None:
    def graph(store: MemoryEngineStore) -> CompiledStateGraph[Chat, None, Chat, Chat]:
        builder = StateGraph(Chat)
        builder.add_node("memory", remember_or_recall)
        builder.add_edge(START, "memory")
        builder.add_edge("memory", END)
        return builder.compile(store=store)

    told = "remember: I am training for the Porto marathon."
    graph(MemoryEngineStore(url=server.url, api_key=API_KEY)).invoke(
        {"user": root, "message": told, "recalled": []}
    )

    # A later run with a store of its own, as a new process would have
    asked = "What race am I training for?"
    later_run = graph(MemoryEngineStore(url=server.url, api_key=API_KEY))
    answer = later_run.invoke({"user": root, "message": asked, "recalled": []})

    assert answer["recalled"][0] == "I am training for the Porto marathon."


class EngineEmbeddings(Embeddings):
    """The engine's own model for LangGraph's InMemoryStore: passages as the bank embeds facts,
    queries as it embeds a search."""

    def __init__(self, server: LocalServer) -> None:
        self.client = server.client()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.client.embed(texts, mode="passage").embeddings or []

    def embed_query(self, text: str) -> list[float]:
        return self.client.embed(text, mode="query").embedding or []

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


PREFERENCES = [
    ("diet", {"text": "Allergic to peanuts and shellfish.", "kind": "health"}),
    ("music", {"text": "Plays the cello on Tuesdays.", "kind": "hobby"}),
    ("pet", {"text": "Has a grey cat called Bori.", "kind": "family"}),
    ("work", {"text": "Works night shifts at the harbour.", "kind": "work"}),
    ("diet-ko", {"text": "지훈은 땅콩 알레르기가 있다.", "kind": "health"}),
    ("raw", {"text": "peanut butter sandwich recipe"}),
]


@pytest.mark.parametrize(
    "query", ["What can they not eat?", "Which instrument?", "고양이 이름", "When do they work?"]
)
def test_the_same_items_rank_as_in_langgraphs_in_memory_store(
    server: LocalServer, store: MemoryEngineStore, root: str, query: str
) -> None:
    # Given the same items in LangGraph's InMemoryStore embedding with the engine's model, one put
    # with index=False in each
    from langgraph.store.memory import InMemoryStore

    theirs = InMemoryStore(index={"dims": 384, "embed": EngineEmbeddings(server), "fields": ["text"]})
    mine = MemoryEngineStore(server.url, API_KEY, index={"fields": ["text"]})
    for each in (theirs, mine):
        for key, value in PREFERENCES:
            each.put((root, "prefs"), key, value, index=False if key == "raw" else None)
    # When each is searched with the same query
    their_keys = [(hit.key, hit.score) for hit in theirs.search((root,), query=query, limit=10)]
    my_keys = [(hit.key, hit.score) for hit in mine.search((root,), query=query, limit=10)]
    # Then the keys come in the same order, the unindexed item last and unscored, the scores alike
    assert [key for key, _ in my_keys] == [key for key, _ in their_keys]
    assert my_keys[-1] == ("raw", None)
    assert all(abs((a or 0) - (b or 0)) < 1e-3 for (_, a), (_, b) in zip(my_keys, their_keys, strict=True))


def test_an_abatch_of_a_hundred_puts_stores_every_item(server: LocalServer, root: str) -> None:
    # Given the async store (its client keeps at most 8 requests in flight)
    store = MemoryEngineStore(server.url, API_KEY)
    puts = [PutOp((root, "bulk"), f"item-{n:03d}", {"text": f"note number {n}"}) for n in range(100)]

    # When 100 puts go in one abatch
    asyncio.run(store.abatch(puts))

    # Then all 100 are there, none refused by a full server
    listed = store.search((root, "bulk"), limit=200)
    assert sorted(item.key for item in listed) == [f"item-{n:03d}" for n in range(100)]
