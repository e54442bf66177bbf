"""The game-NPC memory API over HTTP on the local server."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e

SESSION = "game-session-1"


def consolidate(server: LocalServer, uuid: str, npc: str, query: str, answer: str) -> None:
    turn = {"uuid": uuid, "query": query, "answer": answer, "npc_id": npc}
    server.client().consolidate(SESSION, "game-thread-1", turn, user_name="Hero", language="en")


def test_a_session_with_two_npcs_and_mixed_types_reads_back_in_the_game_envelope(server: LocalServer) -> None:
    api = server.client()
    # Given play with the innkeeper and chats recorded with the innkeeper and the smith
    consolidate(server, "g1", "npc-innkeeper", "A room for the night?", "Five silver, friend.")
    saved = api.game_record(
        SESSION,
        [
            {"npc_id": "npc-smith", "message": "Can you fix my sword?", "reply": "Come back at noon."},
            {"npc_id": "npc-innkeeper", "message": "Any rumours?", "reply": "Wolves in the east woods."},
        ],
    )
    assert (saved.code, saved.msg) == (0, "successfully saved 2 memories")
    # When the session's memory is read
    body = api.game_memory(SESSION)
    # Then every turn is there in order, with Types and counters per npc
    assert (body.code, body.msg) == (0, "ok")
    items = body.data.memory_item
    assert [(i.BotIndex, i.Type, i.Message) for i in items] == [
        ("npc-innkeeper", 0, "A room for the night?"),
        ("npc-smith", 1, "Can you fix my sword?"),
        ("npc-innkeeper", 1, "Any rumours?"),
    ]
    assert body.data.counters == {"npc-innkeeper": 2, "npc-smith": 1, "all": 3}
    assert all(int(item.CreateTime) > 1_700_000_000 for item in items)


def test_recording_into_an_unknown_session_answers_an_error_envelope(server: LocalServer) -> None:
    # The envelope itself is the point here: read on the wire, not through the client.
    status, body = server.call(
        "POST", "/open/game/recordmemory", {"session_id": "nope", "chats": [{"npc_id": "n", "message": "hi"}]}
    )

    assert status == 404
    assert body["code"] != 0 and "nope" in body["msg"]
