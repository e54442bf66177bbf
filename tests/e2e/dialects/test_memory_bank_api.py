"""The scoped memory-bank API over HTTP on the local server (real model, built-in fact extractor)."""

from __future__ import annotations

import pytest

from memory_engine.models.bank import BankMemory
from memory_engine_client import NotFound
from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e

PETS = {"user_id": "e2e-bank", "topic": "pets"}


def create(server: LocalServer, fact: str, scope: dict[str, str]) -> BankMemory:
    return server.client().bank_create(fact, scope)


def test_create_get_and_delete_by_name(server: LocalServer) -> None:
    api = server.client()
    memory = create(server, "The user's parrot is called Kiwi.", {"user_id": "e2e-crud"})

    assert api.bank_get(memory.name) == memory
    assert api.bank_delete(memory.name).deleted
    with pytest.raises(NotFound):
        api.bank_get(memory.name)


def test_similarity_search_is_closest_first_within_the_exact_scope(server: LocalServer) -> None:
    # Given pet facts in one scope, one in a wider scope and one in a narrower scope
    for fact in [
        "My cat Mochi sleeps on the piano.",
        "I water the tomatoes every morning.",
        "My cat hates rain.",
    ]:
        create(server, fact, PETS)
    create(server, "My cat is a Siamese.", {**PETS, "extra": "yes"})
    create(server, "My cat is orange.", {"user_id": "e2e-bank"})
    # When searched for cats, with the client (the slash spelling) and with the colon spelling
    scope = {"topic": "pets", "user_id": "e2e-bank"}
    hits = server.client().bank_search(scope, "my cat").retrieved_memories
    query = {"scope": scope, "similarity_search_params": {"search_query": "my cat"}}
    status, colon = server.call("POST", "/v1/memories:retrieve", query)
    # Then three hits (the default top_k) of that scope only, by ascending distance
    assert status == 200
    # The server leaves out what a fact does not have (`expireTime`, `invalidAt`): so does the dump
    assert colon["retrieved_memories"] == [hit.model_dump(exclude_none=True) for hit in hits]
    distances = [hit.distance or 0.0 for hit in hits]
    assert distances == sorted(distances)
    assert {hit.memory.fact for hit in hits[:2]} == {
        "My cat Mochi sleeps on the piano.",
        "My cat hates rain.",
    }
    assert all(hit.memory.scope == PETS for hit in hits) and len(hits) == 3


def test_simple_retrieval_pages_visit_every_memory_once(server: LocalServer) -> None:
    scope = {"user_id": "e2e-pages"}
    names = {create(server, f"Fact number {n} about the garden.", scope).name for n in range(7)}

    seen = [memory.name for memory in server.client().bank_list_all(scope, page_size=2)]

    assert sorted(seen) == sorted(names) and len(seen) == 7


def test_generate_merges_instead_of_duplicating(server: LocalServer) -> None:
    api = server.client()
    scope = {"user_id": "e2e-generate"}
    said = ["I am learning to play the cello."]

    first = api.bank_generate(scope, said)
    again = api.bank_generate(scope, said)

    assert [change.action for change in first.generated_memories] == ["CREATED"]
    assert again.generated_memories == []
    assert len(api.bank_list(scope).retrieved_memories) == 1
