"""`Authorization: <key>` with no scheme (the game dialect's documented form) is a key like any
other: the same resolvers decide its tenant, so it is as tenant-scoped and as constant-time as
`Bearer <key>`, and a wrong one is a 401 like any wrong key."""

from __future__ import annotations

from typing import Any

from tests.fakes.stack import LocalStack

TURN = {
    "session_uuid": "game-session",
    "parent_session_uuid": "game-session",
    "new_dialog": {"uuid": "t1", "query": "A room for the night?", "answer": "Five silver.", "npc_id": "inn"},
    "user_name": "Hero",
    "language": "en",
}


def game_memory(stack: LocalStack, authorization: str) -> tuple[int, Any]:
    status, _, body = stack.call(
        "POST", "/open/game/memory", {"session_id": "game-session"}, headers={"Authorization": authorization}
    )
    return status, body


def test_a_bare_key_reads_its_own_tenants_game_session(stack: LocalStack) -> None:
    key = stack.key_for("tenant-a")
    assert stack.call("POST", "/v1/engine/consolidate/", TURN, key=key)[0] == 200

    status, body = game_memory(stack, key)

    assert status == 200 and body["code"] == 0
    assert [item["Message"] for item in body["data"]["memory_item"]] == ["A room for the night?"]


def test_a_bare_key_of_another_tenant_sees_no_such_session(stack: LocalStack) -> None:
    assert stack.call("POST", "/v1/engine/consolidate/", TURN, key=stack.key_for("tenant-a"))[0] == 200

    status, body = game_memory(stack, stack.key_for("tenant-b"))

    assert status == 404 and body["code"] == 404


def test_a_bare_key_with_a_wrong_secret_is_unauthorized(stack: LocalStack) -> None:
    real = stack.key_for("tenant-a")
    forged = real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB")

    status, body = game_memory(stack, forged)

    assert status == 401 and "API key" in body["msg"]  # the game envelope


def test_a_bare_key_works_on_the_native_routes_too(stack: LocalStack) -> None:
    status, _, _ = stack.call(
        "POST",
        "/v1/engine/consolidate/",
        TURN,
        headers={"Authorization": stack.key_for("tenant-a"), "Content-Type": "application/json"},
    )

    assert status == 200
