"""The game-NPC memory API over HTTP on the local server."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e

SESSION = "game-session-1"


def consolidate(server: LocalServer, uuid: str, npc: str, query: str, answer: str) -> None:
    body = {
        "session_uuid": SESSION,
        "parent_session_uuid": "game-thread-1",
        "new_dialog": {"uuid": uuid, "query": query, "answer": answer, "npc_id": npc},
        "user_name": "Hero",
        "language": "en",
    }
    assert server.call("POST", "/v1/engine/consolidate/", body)[0] == 200


def test_a_session_with_two_npcs_and_mixed_types_reads_back_in_the_game_envelope(server: LocalServer) -> None:
    # Given play with the innkeeper and chats recorded with the innkeeper and the smith
    consolidate(server, "g1", "npc-innkeeper", "A room for the night?", "Five silver, friend.")
    status, saved = server.call(
        "POST",
        "/open/game/recordmemory",
        {
            "session_id": SESSION,
            "chats": [
                {"npc_id": "npc-smith", "message": "Can you fix my sword?", "reply": "Come back at noon."},
                {"npc_id": "npc-innkeeper", "message": "Any rumours?", "reply": "Wolves in the east woods."},
            ],
        },
    )
    assert (status, saved) == (200, {"code": 0, "msg": "successfully saved 2 memories"})
    # When the session's memory is read
    status, body = server.call("POST", "/open/game/memory", {"session_id": SESSION})
    # Then every turn is there in order, with Types and counters per npc
    assert status == 200 and (body["code"], body["msg"]) == (0, "ok")
    items: list[dict[str, Any]] = body["data"]["memory_item"]
    assert [(i["BotIndex"], i["Type"], i["Message"]) for i in items] == [
        ("npc-innkeeper", 0, "A room for the night?"),
        ("npc-smith", 1, "Can you fix my sword?"),
        ("npc-innkeeper", 1, "Any rumours?"),
    ]
    assert body["data"]["counters"] == {"npc-innkeeper": 2, "npc-smith": 1, "all": 3}
    assert all(int(item["CreateTime"]) > 1_700_000_000 for item in items)


def test_recording_into_an_unknown_session_answers_an_error_envelope(server: LocalServer) -> None:
    status, body = server.call(
        "POST", "/open/game/recordmemory", {"session_id": "nope", "chats": [{"npc_id": "n", "message": "hi"}]}
    )

    assert status == 404
    assert body["code"] != 0 and "nope" in body["msg"]
