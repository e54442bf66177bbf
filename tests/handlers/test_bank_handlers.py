"""The scoped memory-bank API through its lambda_handlers, fed the sample events."""

from __future__ import annotations

import pytest

from tests.handlers.dialects import Answer, call, sample_body

pytestmark = pytest.mark.usefixtures("engine")


def created_id() -> str:
    answer = call("bank_create")
    assert answer.status == 200, answer.text
    return str(answer.json["name"]).removeprefix("memories/")


def by_id(function: str, memory_id: str) -> Answer:
    return call(function, path=f"/v1/memories/{memory_id}", path_parameters={"id": memory_id})


def test_the_sample_create_event_answers_the_memory() -> None:
    answer = call("bank_create")

    assert answer.status == 200
    assert set(answer.json) == {"name", "fact", "scope", "createTime", "updateTime"}
    assert (answer.json["fact"], answer.json["scope"]) == (
        "The user's dog is named Pepper.",
        {"user_id": "123"},
    )


def test_the_sample_get_event_finds_a_created_memory() -> None:
    memory_id = created_id()

    answer = by_id("bank_get", memory_id)

    assert (answer.status, answer.json["name"]) == (200, f"memories/{memory_id}")


def test_getting_an_unknown_memory_is_a_404_in_the_native_error_format() -> None:
    answer = call("bank_get")

    assert answer.status == 404
    assert answer.json["status"] == "error" and "memories/20260318_040037_d60e66" in answer.json["message"]


def test_the_sample_delete_event_deletes_and_a_second_delete_is_a_404() -> None:
    memory_id = created_id()

    first, second = by_id("bank_delete", memory_id), by_id("bank_delete", memory_id)

    assert (first.status, first.json) == (200, {"name": f"memories/{memory_id}", "deleted": True})
    assert second.status == 404


@pytest.mark.parametrize("path", ["/v1/memories/retrieve", "/v1/memories:retrieve"])
def test_both_spellings_of_retrieve_find_the_sample_fact(path: str) -> None:
    created_id()

    answer = call("bank_retrieve", path=path)

    assert answer.status == 200
    [hit] = answer.json["retrieved_memories"]
    assert hit["memory"]["fact"] == "The user's dog is named Pepper." and hit["distance"] >= 0


def test_simple_retrieval_leaves_out_distance_and_token_when_one_page_holds_all() -> None:
    created_id()

    answer = call("bank_retrieve", {"scope": {"user_id": "123"}, "simple_retrieval_params": {}})

    assert answer.status == 200
    assert list(answer.json) == ["retrieved_memories"]
    assert list(answer.json["retrieved_memories"][0]) == ["memory"]


def test_asking_for_both_retrieval_modes_is_a_422_naming_the_field() -> None:
    body = {**sample_body("bank_retrieve"), "simple_retrieval_params": {"page_size": 5}}

    answer = call("bank_retrieve", body)

    assert answer.status == 422
    assert [error["field"] for error in answer.json["errors"]] == ["simple_retrieval_params"]


def test_a_scope_with_a_non_string_value_is_a_422_naming_it() -> None:
    answer = call("bank_create", {"fact": "x", "scope": {"user_id": 123}})

    assert answer.status == 422
    assert [error["field"] for error in answer.json["errors"]] == ["scope.user_id"]


@pytest.mark.parametrize("path", ["/v1/memories/generate", "/v1/memories:generate"])
def test_both_spellings_of_generate_store_the_users_fact(path: str) -> None:
    answer = call("bank_generate", path=path)

    assert answer.status == 200
    assert [(m["action"], m["memory"]["fact"]) for m in answer.json["generated_memories"]] == [
        ("CREATED", "I adopted a beagle named Pepper last spring.")
    ]
