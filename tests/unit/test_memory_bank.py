"""The memory bank's verbs over fakes: exact scopes, distance order, pages, generate's merging.

Every test runs once per store/queue backend (`ENGINE_BACKENDS`): locally and on DynamoDB/SQS (moto)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, InvalidInput, NotFound
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.bank import (
    CreateMemoryRequest,
    GenerateMemoriesRequest,
    PatchMemoryRequest,
    RetrieveMemoriesRequest,
)
from memory_engine.usecases import bank, bank_generate, bank_retrieve, consolidate
from memory_engine.usecases.facts import euclidean
from tests.fakes.engine import ENGINE_BACKENDS, run_worker

TENANT = "acme"
SCOPE = {"user_id": "123", "app": "rpg"}


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        yield engine


def create(engine: Engine, fact: str, scope: dict[str, str] | None = None) -> str:
    request = CreateMemoryRequest(fact=fact, scope=scope or SCOPE)
    return bank.create(engine, TENANT, request).name


def similar(engine: Engine, query: str, scope: dict[str, str] | None = None, **params: Any) -> list[Any]:
    request = RetrieveMemoriesRequest.model_validate(
        {"scope": scope or SCOPE, "similarity_search_params": {"search_query": query, **params}}
    )
    return bank_retrieve.run(engine, TENANT, request).retrieved_memories


def page(engine: Engine, scope: dict[str, str] | None = None, **params: Any) -> Any:
    request = RetrieveMemoriesRequest.model_validate(
        {"scope": scope or SCOPE, "simple_retrieval_params": params}
    )
    return bank_retrieve.run(engine, TENANT, request)


def generate(engine: Engine, *texts: str, scope: dict[str, str] | None = None) -> list[Any]:
    events = [{"content": {"role": "user", "parts": [{"text": text}]}} for text in texts]
    request = GenerateMemoriesRequest.model_validate(
        {"scope": scope or SCOPE, "direct_contents_source": {"events": events}}
    )
    return bank_generate.run(engine, TENANT, request).generated_memories


def thread_memory(engine: Engine, *queries: str) -> Any:
    """Consolidate the queries into thread-1 and extract them into one engine memory."""
    for n, query in enumerate(queries, start=1):
        request = ConsolidateRequest.model_validate(
            {
                "session_uuid": "s1",
                "parent_session_uuid": "thread-1",
                "new_dialog": {"uuid": f"d{n}", "query": query},
                "options": {"force_summary": n == len(queries)},
            }
        )
        consolidate.run(engine, TENANT, request)
    [memory] = run_worker(engine)
    return memory


def test_a_created_fact_reads_back_by_name_with_its_scope(engine: Engine) -> None:
    name = create(engine, "The user's dog is named Pepper.")

    memory = bank.get(engine, TENANT, name.removeprefix("memories/"))

    assert (memory.name, memory.fact, memory.scope) == (name, "The user's dog is named Pepper.", SCOPE)
    assert memory.createTime == memory.updateTime and memory.createTime.endswith("Z")


def test_a_memory_of_a_wider_scope_is_not_returned_for_a_narrower_one(engine: Engine) -> None:
    # Given a fact of scope {a, b}
    create(engine, "apples are red", {"a": "1", "b": "2"})
    # When scope {a} is searched both ways
    found = similar(engine, "apples are red", {"a": "1"})
    listed = page(engine, {"a": "1"}).retrieved_memories
    # Then nothing comes back: scopes match exactly
    assert (found, listed) == ([], [])


def test_a_scope_matches_in_any_key_order(engine: Engine) -> None:
    create(engine, "apples are red", {"a": "1", "b": "2"})

    found = similar(engine, "apples", {"b": "2", "a": "1"})

    assert [hit.memory.fact for hit in found] == ["apples are red"]


def test_scope_values_match_case_sensitively(engine: Engine) -> None:
    create(engine, "apples are red", {"user": "Alex"})

    assert similar(engine, "apples", {"user": "alex"}) == []


def test_similarity_search_is_sorted_by_euclidean_distance_smallest_first(engine: Engine) -> None:
    # Given facts sharing more or fewer words with the query
    facts = [
        "zebra stripes on the savanna",
        "apple pie with cinnamon",
        "apple pie",
        "apple orchard in autumn",
        "pie charts in reports",
    ]
    for fact in facts:
        create(engine, fact)
    # When searched with a top_k covering all of them
    hits = similar(engine, "apple pie", top_k=10)
    # Then the distances are the embeddings' Euclidean ones, ascending
    query = engine.embedder.embed(["apple pie"], mode="query")[0]
    expected = {fact: euclidean(query, engine.embedder.embed([fact])[0]) for fact in facts}
    assert [hit.distance for hit in hits] == sorted(hit.distance for hit in hits)
    assert {hit.memory.fact: hit.distance for hit in hits} == pytest.approx(expected, abs=1e-5)
    assert hits[0].memory.fact == "apple pie"


def test_similarity_search_returns_three_by_default(engine: Engine) -> None:
    for n in range(5):
        create(engine, f"fact number {n}")

    assert len(similar(engine, "fact number")) == 3


def test_pages_walk_every_memory_of_the_scope_exactly_once(engine: Engine) -> None:
    # Given ten facts in the scope and some elsewhere
    names = {create(engine, f"fact number {n}") for n in range(10)}
    create(engine, "another scope's fact", {"user_id": "456"})
    # When every page of three is read
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        response = page(engine, page_size=3, **({"page_token": token} if token else {}))
        seen.extend(hit.memory.name for hit in response.retrieved_memories)
        pages += 1
        token = response.next_page_token
        if token is None:
            break
    # Then each fact of the scope came once, in four pages
    assert sorted(seen) == sorted(names) and len(seen) == len(set(seen))
    assert pages == 4


def test_simple_retrieval_pages_hold_a_hundred_by_default(engine: Engine) -> None:
    for n in range(3):
        create(engine, f"fact number {n}")

    response = page(engine)

    assert len(response.retrieved_memories) == 3 and response.next_page_token is None
    assert all(hit.distance is None for hit in response.retrieved_memories)


def test_a_page_token_of_another_scope_is_refused_naming_the_field(engine: Engine) -> None:
    for n in range(3):
        create(engine, f"fact number {n}")
    token = page(engine, page_size=1).next_page_token

    with pytest.raises(InvalidInput) as raised:
        page(engine, {"user_id": "456"}, page_size=1, page_token=token)

    assert raised.value.errors[0]["field"] == "simple_retrieval_params.page_token"


def test_an_empty_scope_retrieves_an_empty_list(engine: Engine) -> None:
    assert similar(engine, "anything") == []
    assert page(engine).retrieved_memories == []


def test_engine_memories_are_visible_under_their_thread_scope(engine: Engine) -> None:
    # Given a thread whose turns were extracted into a memory
    memory = thread_memory(engine, "my cat Mochi likes sardines", "she sleeps on the piano")
    # When the thread's scope is retrieved
    listed = page(engine, {"parent_session_uuid": "thread-1"}).retrieved_memories
    # Then the engine's memory is there, its summary as the fact
    assert [(hit.memory.name, hit.memory.fact) for hit in listed] == [
        (f"memories/{memory.memory_id}", memory.content)
    ]
    assert listed[0].memory.scope == {"parent_session_uuid": "thread-1"}


def test_a_deleted_memory_is_gone_from_get_and_from_search(engine: Engine) -> None:
    name = create(engine, "The user's dog is named Pepper.")
    memory_id = name.removeprefix("memories/")

    bank.delete(engine, TENANT, memory_id)

    with pytest.raises(NotFound):
        bank.get(engine, TENANT, memory_id)
    assert similar(engine, "dog Pepper") == []


def test_generating_the_same_fact_twice_stores_it_once(engine: Engine) -> None:
    first = generate(engine, "My dog is named Pepper and he loves the beach.")

    second = generate(engine, "My dog is named Pepper and he loves the beach!")

    assert [change.action for change in first] == ["CREATED"]
    assert second == []
    assert len(page(engine).retrieved_memories) == 1


def test_generating_a_changed_fact_updates_it_in_place(engine: Engine) -> None:
    [created] = generate(engine, "My younger sister lives in Busan near the harbour.")

    [updated] = generate(engine, "My younger sister lives in Busan near the station.")

    assert updated.action == "UPDATED" and updated.memory.name == created.memory.name
    [stored] = page(engine).retrieved_memories
    assert stored.memory.fact == "My younger sister lives in Busan near the station."
    assert stored.memory.updateTime > stored.memory.createTime


def test_generate_takes_facts_from_the_user_not_from_the_model(engine: Engine) -> None:
    request = GenerateMemoriesRequest.model_validate(
        {
            "scope": SCOPE,
            "direct_contents_source": {
                "events": [
                    {"content": {"role": "user", "parts": [{"text": "I play the cello every evening."}]}},
                    {
                        "content": {
                            "role": "model",
                            "parts": [{"text": "The cello is a wonderful instrument."}],
                        }
                    },
                ]
            },
        }
    )

    changes = bank_generate.run(engine, TENANT, request).generated_memories

    assert [change.memory.fact for change in changes] == ["I play the cello every evening."]


def test_a_fact_created_under_a_thread_scope_is_found_by_the_engine_retrieve_of_that_thread(
    engine: Engine,
) -> None:
    from memory_engine.models.api import RetrieveRequest
    from memory_engine.usecases import retrieve

    # Given a fact created under the thread's scope
    name = create(engine, "The user's sister Ana lives in Porto.", {"parent_session_uuid": "thread-1"})
    # When the native API retrieves from that thread
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": "Where does Ana live?"}}
    )
    hits = retrieve.run(engine, TENANT, request).data
    # Then the fact is a hit like any memory of the thread
    assert [(hit.memory_id, hit.content) for hit in hits] == [
        (name.removeprefix("memories/"), "The user's sister Ana lives in Porto.")
    ]


class ScriptedFacts:
    """A FactExtractor answering with operations a test writes, like an LLM would."""

    def __init__(self, make_ops: Any) -> None:
        self.make_ops = make_ops
        self.seen: list[list[tuple[str, str]]] = []

    def extract_facts(self, messages: Any, existing: Any, language: str = "ko") -> Any:
        from memory_engine.extraction.fact_extractor import FactExtraction

        self.seen.append(list(existing))
        return FactExtraction(operations=list(self.make_ops(dict(existing))))


def test_merge_applies_update_delete_and_add_from_the_extractor(engine: Engine) -> None:
    from memory_engine.extraction.fact_extractor import FactOperation

    # Given two facts in the scope and an extractor that updates one, deletes the other, adds one
    seoul = create(engine, "The user lives in Seoul.").removeprefix("memories/")
    cat = create(engine, "The user has a cat.").removeprefix("memories/")
    engine.facts = ScriptedFacts(
        lambda existing: [
            FactOperation(op="update", id=seoul, fact="The user lives in Busan."),
            FactOperation(op="delete", id=cat, fact=existing[cat]),
            FactOperation(op="add", fact="The user surfs."),
        ]
    )
    # When the user's words are generated into the scope
    changes = generate(engine, "I moved to Busan, gave my cat to my mother, and I surf now.")
    # Then the extractor saw both facts, and the scope holds what it decided
    assert sorted(engine.facts.seen[0]) == sorted(
        [(seoul, "The user lives in Seoul."), (cat, "The user has a cat.")]
    )
    assert sorted(change.action for change in changes) == ["CREATED", "DELETED", "UPDATED"]
    facts = {
        hit.memory.name.removeprefix("memories/"): hit.memory.fact for hit in page(engine).retrieved_memories
    }
    assert facts.pop(seoul) == "The user lives in Busan."
    assert cat not in facts and list(facts.values()) == ["The user surfs."]
    assert [hit.memory.fact for hit in similar(engine, "Busan", top_k=1)] == ["The user lives in Busan."]


def test_merge_never_offers_engine_memories_to_the_extractor(engine: Engine) -> None:
    # Given a thread with an engine memory
    thread_memory(engine, "my cat Mochi likes sardines")
    scripted = ScriptedFacts(lambda existing: [])
    engine.facts = scripted
    # When facts are generated into the thread's scope
    generate(engine, "My cat Mochi likes sardines a lot.", scope={"parent_session_uuid": "thread-1"})
    # Then the extractor was shown no existing fact: engine memories are not facts to merge
    assert scripted.seen == [[]]


def test_two_corrections_of_one_fact_at_once_keep_both_wordings_or_refuse_the_later(engine: Engine) -> None:
    # Given a fact two callers read and correct at once: the second one's write lands in between
    memory_id = create(engine, "Mina lives in Busan.").removeprefix("memories/")
    inner = engine.store

    class Racing:
        """The store, with the other caller's correction written just before this one's."""

        def __init__(self) -> None:
            self.raced = False

        def update_memory(self, memory: Any, **kwargs: Any) -> bool:
            if not self.raced:
                self.raced = True
                bank.patch(
                    replace(engine, store=inner),
                    TENANT,
                    memory_id,
                    PatchMemoryRequest(fact="Mina lives in Seoul."),
                )
            written: bool = inner.update_memory(memory, **kwargs)
            return written

        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

    # When this caller's correction is written over its stale read / Then it is refused, naming why
    with pytest.raises(Conflict, match="corrected or retired by another request meanwhile"):
        bank.patch(
            replace(engine, store=Racing()), TENANT, memory_id, PatchMemoryRequest(fact="Mina lives in Jeju.")
        )

    # And the other correction is kept with the first wording as its revision: nothing lost
    history = bank.revisions(engine, TENANT, memory_id)
    assert [revision.fact for revision in history.revisions] == [
        "Mina lives in Busan.",
        "Mina lives in Seoul.",
    ]
