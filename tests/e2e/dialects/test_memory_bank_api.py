"""The scoped memory-bank API over HTTP on the local server (real model, built-in fact extractor)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e

PETS = {"user_id": "e2e-bank", "topic": "pets"}


def create(server: LocalServer, fact: str, scope: dict[str, str]) -> dict[str, Any]:
    status, body = server.call("POST", "/v1/memories", {"fact": fact, "scope": scope})
    assert status == 200, body
    return body


def retrieve(server: LocalServer, body: dict[str, Any], path: str = "/v1/memories:retrieve") -> list[Any]:
    status, answer = server.call("POST", path, body)
    assert status == 200, answer
    return list(answer["retrieved_memories"])


def test_create_get_and_delete_by_name(server: LocalServer) -> None:
    memory = create(server, "The user's parrot is called Kiwi.", {"user_id": "e2e-crud"})
    path = "/v1/" + memory["name"]

    assert server.call("GET", path) == (200, memory)
    assert server.call("DELETE", path)[0] == 200
    assert server.call("GET", path)[0] == 404


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
    # When searched for cats with both spellings of retrieve
    query = {
        "scope": {"topic": "pets", "user_id": "e2e-bank"},
        "similarity_search_params": {"search_query": "my cat"},
    }
    colon, slash = retrieve(server, query), retrieve(server, query, "/v1/memories/retrieve")
    # Then three hits (the default top_k) of that scope only, by ascending distance
    assert colon == slash
    assert [hit["distance"] for hit in colon] == sorted(hit["distance"] for hit in colon)
    assert {hit["memory"]["fact"] for hit in colon[:2]} == {
        "My cat Mochi sleeps on the piano.",
        "My cat hates rain.",
    }
    assert all(hit["memory"]["scope"] == PETS for hit in colon) and len(colon) == 3


def test_simple_retrieval_pages_visit_every_memory_once(server: LocalServer) -> None:
    scope = {"user_id": "e2e-pages"}
    names = {create(server, f"Fact number {n} about the garden.", scope)["name"] for n in range(7)}

    seen: list[str] = []
    params: dict[str, Any] = {"page_size": 2}
    while True:
        status, page = server.call(
            "POST", "/v1/memories:retrieve", {"scope": scope, "simple_retrieval_params": params}
        )
        assert status == 200
        seen.extend(hit["memory"]["name"] for hit in page["retrieved_memories"])
        if "next_page_token" not in page:
            break
        params = {"page_size": 2, "page_token": page["next_page_token"]}

    assert sorted(seen) == sorted(names) and len(seen) == 7


def test_generate_merges_instead_of_duplicating(server: LocalServer) -> None:
    scope = {"user_id": "e2e-generate"}
    said = {
        "events": [{"content": {"role": "user", "parts": [{"text": "I am learning to play the cello."}]}}]
    }

    status, first = server.call(
        "POST", "/v1/memories:generate", {"scope": scope, "direct_contents_source": said}
    )
    status_again, again = server.call(
        "POST", "/v1/memories/generate", {"scope": scope, "direct_contents_source": said}
    )

    assert (status, status_again) == (200, 200)
    assert [change["action"] for change in first["generated_memories"]] == ["CREATED"]
    assert again["generated_memories"] == []
    assert len(retrieve(server, {"scope": scope})) == 1
