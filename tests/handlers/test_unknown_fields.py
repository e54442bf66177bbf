"""Unknown request fields are 422s naming them; the memory bank also takes Google's camelCase."""

from __future__ import annotations

import pytest

from memory_engine.models.chat import ChatCompletionRequest
from tests.handlers.conftest import Invoke
from tests.handlers.dialects import call, sample_body

pytestmark = pytest.mark.usefixtures("engine")


def fact(text: str, user: str = "123") -> None:
    assert call("bank_create", {"fact": text, "scope": {"user_id": user}}).status == 200


def test_a_google_style_similarity_search_honours_top_k() -> None:
    fact("The user's dog is named Pepper.")
    fact("The user lives in Busan.")
    fact("The user plays the violin.")

    answer = call(
        "bank_retrieve",
        {"scope": {"user_id": "123"}, "similaritySearchParams": {"searchQuery": "dog name", "topK": 1}},
    )

    # Before, the camelCase params were dropped and the whole scope came back, unranked.
    assert answer.status == 200, answer.text
    hits = answer.json["retrieved_memories"]
    assert len(hits) == 1 and "distance" in hits[0]


def test_a_google_style_simple_retrieval_pages_by_page_size() -> None:
    for n in range(3):
        fact(f"fact {n}")

    answer = call("bank_retrieve", {"scope": {"user_id": "123"}, "simpleRetrievalParams": {"pageSize": 2}})

    assert answer.status == 200, answer.text
    assert len(answer.json["retrieved_memories"]) == 2 and answer.json["next_page_token"]
    following = call(
        "bank_retrieve",
        {
            "scope": {"user_id": "123"},
            "simpleRetrievalParams": {"pageSize": 2, "pageToken": answer.json["next_page_token"]},
        },
    )
    assert len(following.json["retrieved_memories"]) == 1


def test_a_google_style_generate_reads_direct_contents_source() -> None:
    body = sample_body("bank_generate")
    body["directContentsSource"] = body.pop("direct_contents_source")

    answer = call("bank_generate", body)

    assert answer.status == 200, answer.text
    assert answer.json["generated_memories"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"scope": {"user_id": "1"}, "similaritySearchParams": {"searchQuery": "x", "top": 1}}, "top"),
        ({"scope": {"user_id": "1"}, "filter": "x"}, "filter"),
    ],
)
def test_any_other_unknown_bank_field_is_a_422_naming_it(body: dict[str, object], field: str) -> None:
    answer = call("bank_retrieve", body)

    assert answer.status == 422
    assert any(error["field"].endswith(field) for error in answer.json["errors"]), answer.text


def test_an_unknown_native_field_is_a_422_that_gives_the_right_spelling(invoke: Invoke) -> None:
    body = sample_body("consolidate")
    body["options"] = {"forceSummary": True}
    body["new_dialog"]["npcId"] = "npc-1"

    status, answer = invoke("consolidate", body)

    assert status == 422
    messages = {error["field"]: error["message"] for error in answer["errors"]}
    assert "force_summary" in messages["options.forceSummary"]
    assert "npc_id" in messages["new_dialog.npcId"]
    assert "forceSummary" in answer["message"]


def test_an_unknown_native_field_stores_nothing(invoke: Invoke) -> None:
    body = sample_body("consolidate")
    body["surprise"] = 1

    status, answer = invoke("consolidate", body)

    assert status == 422 and "surprise" in answer["message"]
    assert invoke("retrieve")[1]["data"] == []


def test_a_game_request_with_npc_id_in_camel_case_is_an_error_envelope_naming_npc_id() -> None:
    answer = call("game_memory", {"session_id": "session-1", "npcId": "npc-guard"})

    assert answer.status == 422 and answer.json["code"] == 422
    assert "npcId" in answer.json["msg"] and "npc_id" in answer.json["msg"]


def test_recent_dialogs_may_echo_the_dialogs_as_sent(invoke: Invoke) -> None:
    invoke("consolidate")
    body = sample_body("retrieve")
    body["recent_dialogs"] = [{**sample_body("consolidate")["new_dialog"], "timestamp": 1701139538}]

    status, answer = invoke("retrieve", body)

    assert status == 200, answer


def test_the_chat_request_still_passes_unknown_openai_fields_through() -> None:
    request = ChatCompletionRequest.model_validate(
        {**sample_body("chat_completions"), "temperature": 0.2, "logit_bias": {"1": 2}, "seed": 7}
    )

    assert request.upstream_body()["logit_bias"] == {"1": 2} and request.upstream_body()["seed"] == 7
