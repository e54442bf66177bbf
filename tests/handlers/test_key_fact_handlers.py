"""Correcting an extracted memory's key facts through its routes: PATCH
/v1/memories/{id}/keyFacts/{index} and GET /v1/memories/{id}/keyFacts (issue #45)."""

from __future__ import annotations

import pytest

from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import ConsolidateRequest
from memory_engine.usecases import consolidate
from tests.fakes.engine import run_worker
from tests.handlers.dialects import call


@pytest.fixture
def memory_id(engine: Engine) -> str:
    engine.extractor = BuiltinExtractor()
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-1",
            "user_name": "Mina",
            "new_dialog": {"uuid": "d1", "query": "I have a dog named Max, a beagle.", "answer": "Cute!"},
            "options": {"force_summary": True},
        }
    )
    consolidate.run(engine, "tenant-a", request)
    [memory] = run_worker(engine)
    assert memory.fields.key_facts
    return memory.memory_id


def patch(memory_id: str, index: str, body: object) -> tuple[int, dict[str, object], str]:
    answer = call(
        "bank_patch",
        body,
        path=f"/v1/memories/{memory_id}/keyFacts/{index}",
        path_parameters={"id": memory_id, "index": index},
    )
    return answer.status, answer.json, answer.text


def test_a_corrected_key_fact_answers_its_history_and_the_listing_shows_it(memory_id: str) -> None:
    # When the key fact is corrected through the route
    status, body, text = patch(memory_id, "0", {"fact": "Mina: Max is a corgi."})

    # Then it answers the key fact's wordings, the old one ended by the correction
    assert status == 200, text
    earlier, now = body["revisions"]  # type: ignore[misc]
    assert (earlier["reason"], now["fact"]) == ("correct", "Mina: Max is a corgi.")
    assert "invalidAt" not in now
    # And the memory's key facts read the same history
    listed = call("bank_get", path=f"/v1/memories/{memory_id}/keyFacts", path_parameters={"id": memory_id})
    assert listed.status == 200, listed.text
    assert listed.json == {"name": f"memories/{memory_id}", "keyFacts": [body]}


@pytest.mark.parametrize(
    ("index", "body", "field"),
    [("9", {"retire": True}, "index"), ("x", {"retire": True}, "index"), ("0", {}, "body")],
    ids=["out-of-range", "not-a-number", "no-change"],
)
def test_a_bad_key_fact_patch_is_a_422_naming_the_field(
    memory_id: str, index: str, body: object, field: str
) -> None:
    status, _, text = patch(memory_id, index, body)

    assert status == 422, text
    assert field in text


def test_a_stored_fact_has_no_key_facts_route_and_is_a_409_naming_the_other_route(engine: Engine) -> None:
    created = call("bank_create")
    fact_id = str(created.json["name"]).removeprefix("memories/")

    status, _, text = patch(fact_id, "0", {"retire": True})

    assert status == 409 and f"PATCH /v1/memories/{fact_id}" in text
