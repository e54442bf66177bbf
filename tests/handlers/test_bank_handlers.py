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
    assert set(answer.json) == {"name", "fact", "scope", "createTime", "updateTime", "validFrom"}
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


def test_a_corrected_fact_keeps_its_name_and_its_earlier_wording_as_a_revision() -> None:
    # Given a stored fact
    memory_id = created_id()

    # When the sample PATCH corrects it
    answer = by_id("bank_patch", memory_id)

    # Then it answers the fact with its new wording under the same name
    assert answer.status == 200, answer.text
    assert (answer.json["name"], answer.json["fact"]) == (
        f"memories/{memory_id}",
        "The user lives in Seoul now.",
    )
    # And its revisions read the earlier wording first, ended by the correction, then the current one
    path = f"/v1/memories/{memory_id}/revisions"
    revisions = call("bank_get", path=path, path_parameters={"id": memory_id})
    assert revisions.status == 200, revisions.text
    [earlier, now] = revisions.json["revisions"]
    assert (earlier["fact"], earlier["reason"]) == ("The user's dog is named Pepper.", "correct")
    assert earlier["invalidAt"] == now["validFrom"] and "invalidAt" not in now


def test_a_retired_fact_leaves_the_scopes_listing_but_stays_readable_by_name() -> None:
    # Given a stored fact
    memory_id = created_id()

    # When it is retired
    retired = call(
        "bank_patch", {"retire": True}, path=f"/v1/memories/{memory_id}", path_parameters={"id": memory_id}
    )

    # Then get shows when it stopped holding, and the scope's facts no longer list it
    assert retired.status == 200, retired.text
    assert "invalidAt" in by_id("bank_get", memory_id).json
    listed = call("bank_retrieve", {"scope": {"user_id": "123"}, "simple_retrieval_params": {}})
    assert listed.json["retrieved_memories"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [({}, "body"), ({"fact": "x", "retire": True}, "body"), ({"fact": "  "}, "fact")],
    ids=["neither", "both", "blank"],
)
def test_a_patch_that_asks_for_no_or_two_changes_is_a_422_naming_what_to_send(
    body: dict[str, object], field: str
) -> None:
    memory_id = created_id()

    answer = call("bank_patch", body, path=f"/v1/memories/{memory_id}", path_parameters={"id": memory_id})

    assert answer.status == 422, answer.text
    assert field in answer.text and ("retire" in answer.text or field == "fact")


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
