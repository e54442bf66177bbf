"""The game-NPC memory API through its lambda_handlers: envelope, Types, counters, errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory_engine.composition import wiring
from memory_engine.engine import Engine
from tests.fakes.engine import ENGINE_BACKENDS, run_worker
from tests.handlers.conftest import Invoke
from tests.handlers.dialects import call, sample_body

# Every handler call goes to the fake engine, even in tests that do not touch it themselves.
pytestmark = pytest.mark.usefixtures("engine")


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """The handlers' engine once per store/queue backend: locally and on DynamoDB/SQS (moto)."""
    with ENGINE_BACKENDS[request.param]() as engine:
        wiring.use(engine)
        yield engine
        wiring.use(None)


def consolidate(invoke: Invoke, uuid: str, npc: str | None, query: str, answer: str) -> None:
    body = sample_body("consolidate")
    body["new_dialog"] = {"uuid": uuid, "query": query, "answer": answer, **({"npc_id": npc} if npc else {})}
    assert invoke("consolidate", body)[0] == 200


def record(*chats: tuple[str, str, str], session: str = "session-1") -> Any:
    body = {"session_id": session, "chats": [{"npc_id": n, "message": m, "reply": r} for n, m, r in chats]}
    return call("game_record_memory", body)


def read(**body: Any) -> Any:
    return call("game_memory", {"session_id": "session-1", **body})


def test_the_sample_recordmemory_event_saves_its_two_chats(invoke: Invoke) -> None:
    invoke("consolidate")

    answer = call("game_record_memory")

    assert (answer.status, answer.json) == (200, {"code": 0, "msg": "successfully saved 2 memories"})


def test_two_npcs_and_mixed_types_come_back_oldest_first_with_counters(invoke: Invoke) -> None:
    # Given play with the merchant (Type 0), then chats recorded with the merchant and the guard (Type 1)
    consolidate(invoke, "d1", "npc-merchant", "Do you sell swords?", "Finest steel in town.")
    consolidate(invoke, "d2", None, "Nice weather today.", "")
    record(("npc-merchant", "How much?", "Thirty gold."), ("npc-guard", "When do gates close?", "At dusk."))
    # When the session's memory is read
    answer = read()
    # Then the RPGGO envelope holds every turn in order, with npc ids, Types and counters
    assert answer.status == 200
    assert (answer.json["code"], answer.json["msg"]) == (0, "ok")
    items = answer.json["data"]["memory_item"]
    assert [(i["BotIndex"], i["Type"], i["Message"], i["Reply"]) for i in items] == [
        ("npc-merchant", 0, "Do you sell swords?", "Finest steel in town."),
        ("", 0, "Nice weather today.", ""),
        ("npc-merchant", 1, "How much?", "Thirty gold."),
        ("npc-guard", 1, "When do gates close?", "At dusk."),
    ]
    assert answer.json["data"]["counters"] == {"npc-merchant": 2, "npc-guard": 1, "all": 4}
    assert {item["SessionID"] for item in items} == {"session-1"}
    assert all(item["CreateTime"].isdigit() and item["UpdateTime"].isdigit() for item in items)
    assert [item["Source"] for item in items] == ["consolidate"] * 2 + ["recordmemory"] * 2
    assert "next_page_token" not in answer.json["data"]


def test_an_npc_filter_keeps_that_npcs_turns_and_whole_session_counters(invoke: Invoke) -> None:
    consolidate(invoke, "d1", "npc-merchant", "Do you sell swords?", "Yes.")
    record(("npc-guard", "Halt?", "Halt!"))

    answer = read(npc_id="npc-guard")

    assert [item["Message"] for item in answer.json["data"]["memory_item"]] == ["Halt?"]
    assert answer.json["data"]["counters"] == {"npc-merchant": 1, "npc-guard": 1, "all": 2}


def test_pages_walk_a_long_history_once_in_order(invoke: Invoke) -> None:
    invoke("consolidate")
    record(*[("npc-bard", f"song {n}", f"verse {n}") for n in range(7)])

    messages: list[str] = []
    token = None
    while True:
        data = read(page_size=3, **({"page_token": token} if token else {})).json["data"]
        messages.extend(item["Message"] for item in data["memory_item"])
        token = data.get("next_page_token")
        if token is None:
            break

    assert messages == [sample_body("consolidate")["new_dialog"]["query"], *[f"song {n}" for n in range(7)]]


def test_recorded_chats_join_the_buffer_and_feed_extraction(invoke: Invoke, engine: Engine) -> None:
    # Given a session one turn short of the extraction threshold after its first turn
    invoke("consolidate")
    chats = [("npc-bard", f"Tell me about the dragon of the north {n}", "It sleeps.") for n in range(19)]
    # When recordmemory brings it to 20 buffered turns
    record(*chats)
    # Then extraction runs on them like on any turn
    written = run_worker(engine)
    assert len(written) == 2 and all(len(memory.source_dialog_uuids) == 8 for memory in written)


def test_recording_into_an_unknown_session_is_an_error_envelope() -> None:
    answer = record(("npc-guard", "Hello?", "Who goes there?"), session="no-such-session")

    assert answer.status == 404
    assert answer.json["code"] != 0 and "no-such-session" in answer.json["msg"]


def test_reading_an_unknown_session_is_an_error_envelope() -> None:
    answer = call("game_memory", {"session_id": "no-such-session"})

    assert answer.status == 404
    assert answer.json["code"] == 404 and "no-such-session" in answer.json["msg"]


def test_a_bad_body_is_an_error_envelope_naming_the_field() -> None:
    answer = call("game_record_memory", {"session_id": "session-1", "chats": [{"npc_id": "n"}]})

    assert answer.status == 422 and answer.json["code"] == 422
    assert {error["field"] for error in answer.json["data"]["errors"]} == {"chats.0.message"}


def test_a_chat_uuid_makes_a_retried_record_store_it_once(invoke: Invoke) -> None:
    invoke("consolidate")
    body = {"session_id": "session-1", "chats": [{"npc_id": "npc-guard", "message": "hi", "uuid": "c-1"}]}

    first, again = call("game_record_memory", body), call("game_record_memory", body)

    assert (first.json["msg"], again.json["msg"]) == (
        "successfully saved 1 memories",
        "successfully saved 0 memories",
    )
    assert read().json["data"]["counters"]["all"] == 2
