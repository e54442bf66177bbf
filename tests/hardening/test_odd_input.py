"""Korean, emoji, RTL text, NUL bytes, lone surrogates, 1 MB strings, deep nesting, odd framing:
each is stored exactly or refused with the documented 4xx naming the field, never a crash."""

from __future__ import annotations

import http.client
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.contract.builders import stored_turn
from tests.fakes.stack import LOCAL_KEY, LocalStack, serve_http

MEGABYTE = "가" * 1_000_000
TEXTS = {
    "korean": "제 강아지 이름은 후추예요. 내일 부산에 가요!",
    "emoji": "family 👨‍👩‍👧‍👦, flag 🇰🇷, skin tone 👍🏽, keycap 1️⃣",
    "rtl": "שלום עולם — مرحبا بالعالم \u202eevil\u202c",
    "combining": "e\u0301 a\u0308 \u1100\u1161\u11a8 zero\u200bwidth",
    "control": "tab\there\nnew line\r\nand bell \x07",
    "astral": "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠜎𠜱𠝹",
}


def turn(query: str = "hello", *, session: str = "s1", dialog: str = "d1", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "session_uuid": session,
        "parent_session_uuid": "t1",
        "new_dialog": {"uuid": dialog, "query": query, "answer": extra.pop("answer", "ok")},
    }
    return body | extra


def fields_named(body: dict[str, Any]) -> list[str]:
    return [error["field"] for error in body["errors"]]


@pytest.mark.parametrize("name", list(TEXTS))
def test_unusual_scripts_are_stored_and_retrieved_exactly(stack: LocalStack, name: str) -> None:
    text = TEXTS[name]

    status, _, _ = stack.call(
        "POST", "/v1/engine/consolidate/", turn(text, answer=text, user_name=TEXTS["korean"][:5])
    )
    hits = stack.call(
        "POST", "/v1/engine/retrieve/", {"parent_session_uuids": ["t1"], "user_input": {"query": text}}
    )[2]

    stored = stored_turn(stack.engine.store, "local", "s1", "d1")
    assert status == 200 and stored is not None
    assert (stored.query, stored.answer) == (text, text)
    assert text in hits["data"][0]["content"]


@pytest.mark.parametrize(
    "identifier", ["세션-하나", "🦊-session", "مرحبا", "a" * 256, "spaces and / slashes?#"]
)
def test_unicode_and_punctuation_ids_work_end_to_end(stack: LocalStack, identifier: str) -> None:
    status, _, _ = stack.call("POST", "/v1/engine/consolidate/", turn(session=identifier, dialog=identifier))
    deleted = stack.call(
        "DELETE", "/v1/engine/delete/", {"session_uuid": identifier, "dialog_uuid": identifier}
    )

    assert status == 200
    assert deleted[0] == 200 and deleted[2]["data"]["deleted_dialogs"] == [identifier]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (turn("nul \x00 inside"), "new_dialog.query"),
        (turn(answer="nul \x00"), "new_dialog.answer"),
        (turn(session="s\x00"), "session_uuid"),
        (turn(dialog="d\x001"), "new_dialog.uuid"),
        (turn(user_name="Ada\x00"), "user_name"),
        (turn(MEGABYTE), "new_dialog.query"),
        (turn(session=MEGABYTE), "session_uuid"),
        (turn(user_name=MEGABYTE), "user_name"),
        (turn(session=""), "session_uuid"),
    ],
    ids=[
        "nul-query",
        "nul-answer",
        "nul-session",
        "nul-dialog",
        "nul-user",
        "1mb-query",
        "1mb-session",
        "1mb-user",
        "empty-session",
    ],
)
def test_a_bad_consolidate_field_is_a_422_naming_it_and_writes_nothing(
    stack: LocalStack, body: dict[str, Any], field: str
) -> None:
    status, _, answer = stack.call("POST", "/v1/engine/consolidate/", body)

    assert status == 422 and field in fields_named(answer)
    assert stack.engine.store.list_turns("local", body["session_uuid"]) == []


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/v1/engine/retrieve/",
            {"parent_session_uuids": ["t"], "user_input": {"query": MEGABYTE}},
            "user_input.query",
        ),
        (
            "/v1/engine/retrieve/",
            {"parent_session_uuids": ["t\x00"], "user_input": {"query": "q"}},
            "parent_session_uuids.0",
        ),
        (
            "/v1/engine/retrieve/",
            {"parent_session_uuids": ["t"] * 101, "user_input": {"query": "q"}},
            "parent_session_uuids",
        ),
        (
            "/v1/engine/retrieve/",
            {"parent_session_uuids": ["t"], "recent_dialogs": ["d"] * 1001, "user_input": {"query": "q"}},
            "recent_dialogs",
        ),
        (
            "/v1/engine/retrieve/",
            {"parent_session_uuids": ["t"], "user_input": {"query": "q"}, "options": {"limit": 51}},
            "options.limit",
        ),
        (
            "/v1/engine/retrieve/",
            {"parent_session_uuids": ["t"], "user_input": {"query": "q"}, "options": {"limit": 0}},
            "options.limit",
        ),
        ("/v1/engine/embed/", {"text": MEGABYTE}, "text"),
        ("/v1/engine/embed/", {"text": ["x"] * 257}, "text"),
        (
            "/v1/engine/fork-delete/",
            {"source_session_uuid": "s", "target_session_uuid": MEGABYTE, "cutoff_dialog_uuid": "d"},
            "target_session_uuid",
        ),
    ],
    ids=[
        "1mb-query",
        "nul-thread",
        "101-threads",
        "1001-recent",
        "limit-51",
        "limit-0",
        "1mb-embed",
        "257-texts",
        "1mb-target",
    ],
)
def test_a_field_over_its_limit_is_a_422_naming_it(
    stack: LocalStack, path: str, body: Any, field: str
) -> None:
    status, _, answer = stack.call("POST", path, body)

    assert status == 422 and field in fields_named(answer)


def test_the_largest_allowed_turn_is_stored_whole(stack: LocalStack) -> None:
    text = "다" * 100_000

    status, _, _ = stack.call("POST", "/v1/engine/consolidate/", turn(text, answer=text))

    stored = stored_turn(stack.engine.store, "local", "s1", "d1")
    assert status == 200 and stored is not None and len(stored.query) == len(stored.answer) == 100_000


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"[" * 100_000 + b"]" * 100_000, 400),
        (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, 400),
        (
            b'{"session_uuid": "s\\ud800", "parent_session_uuid": "t",'
            b' "new_dialog": {"uuid": "d", "query": "q"}}',
            422,
        ),
        (b'{"session_uuid": "\xff\xfe"}', 400),
        (b'{"options": {"length_limit": ' + b"9" * 5000 + b"}}", 400),
        (
            b'{"session_uuid": "s", "parent_session_uuid": "t", "new_dialog": {"uuid": "d", "query": "q"},'
            b' "options": {"length_limit": Infinity}}',
            422,
        ),
        (b"{not json", 400),
        (b"[]", 422),
        (b'"just a string"', 422),
        (b"null", 422),
        (b"", 422),
    ],
    ids=[
        "deep-array",
        "deep-object",
        "lone-surrogate",
        "not-utf8",
        "huge-int",
        "infinity",
        "broken",
        "array",
        "string",
        "null",
        "empty",
    ],
)
def test_malformed_or_absurd_json_is_a_4xx_never_a_crash(stack: LocalStack, raw: bytes, status: int) -> None:
    answer = stack.call("POST", "/v1/engine/consolidate/", raw=raw)

    assert answer[0] == status and answer[2]["status"] == "error"


@pytest.mark.parametrize(("depth", "status"), [(60, 422), (65, 400)])
def test_nesting_is_parsed_to_64_levels_even_in_an_unknown_field(
    stack: LocalStack, depth: int, status: int
) -> None:
    nested = json.loads("[" * (depth - 1) + "]" * (depth - 1))  # the body object is one level more

    answer = stack.call("POST", "/v1/engine/consolidate/", turn(extra_field=nested))

    # 60 levels parse, and then the unknown field is named (422); 65 are refused as JSON (400).
    assert answer[0] == status
    assert ("extra_field" in answer[2]["message"]) == (status == 422)
    assert stored_turn(stack.engine.store, "local", "s1", "d1") is None


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/open/game/recordmemory",
            {"session_id": "s1", "chats": [{"npc_id": "n\x00", "message": "m"}]},
            "chats.0.npc_id",
        ),
        ("/open/game/memory", {"session_id": "s1", "npc_id": "x\x07"}, "npc_id"),
        ("/v1/memories", {"fact": "f\x00", "scope": {"k": "v"}}, "fact"),
        ("/v1/memories", {"fact": "f", "scope": {"k": "v\x00"}}, "scope"),
    ],
    ids=["game-npc-nul", "game-npc-bell", "bank-fact-nul", "bank-scope-nul"],
)
def test_control_characters_in_dialect_fields_are_a_422(
    stack: LocalStack, path: str, body: Any, field: str
) -> None:
    stack.call("POST", "/v1/engine/consolidate/", turn())

    status, _, answer = stack.call("POST", path, body)

    assert status == 422
    assert field in json.dumps(answer)


def test_a_chat_body_nested_past_the_limit_is_a_400_not_a_crash(stack: LocalStack) -> None:
    messages = [{"role": "user", "content": json.loads("[" * 300 + "]" * 300)}]

    status, _, body = stack.call("POST", "/v1/chat/completions", {"model": "m", "messages": messages})

    assert status == 400 and body["error"]["type"] == "invalid_request_error"


def test_unicode_facts_and_scopes_are_stored_exactly(stack: LocalStack) -> None:
    fact = {"fact": TEXTS["emoji"] + TEXTS["rtl"], "scope": {"사용자": "하나 🦊"}}

    status, _, created = stack.call("POST", "/v1/memories", fact)
    again = stack.call("GET", "/v1/memories/" + created["name"].removeprefix("memories/"))

    assert status == 200 and again[2]["fact"] == fact["fact"] and again[2]["scope"] == fact["scope"]


@pytest.mark.parametrize(
    ("timestamp", "status"),
    [
        ("0001-01-01T00:00:00+01:00", 422),
        (1e20, 422),
        ("yesterday", 422),
        ("2026-03-18T13:00:37+09:00", 200),
        (1773806437, 200),
    ],
)
def test_timestamps_outside_utc_are_refused_and_others_stored_in_utc(
    stack: LocalStack, timestamp: Any, status: int
) -> None:
    body = turn()
    body["new_dialog"]["timestamp"] = timestamp

    answer = stack.call("POST", "/v1/engine/consolidate/", body)

    stored = stored_turn(stack.engine.store, "local", "s1", "d1")
    assert answer[0] == status
    if status == 200:
        assert stored is not None and stored.timestamp == datetime(2026, 3, 18, 4, 0, 37, tzinfo=UTC)
        assert stored.timestamp.utcoffset() == timedelta(0)


def test_a_body_that_is_not_json_is_a_400_whatever_its_content_type(stack: LocalStack) -> None:
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Authorization": f"Bearer {LOCAL_KEY}"}

    status, _, body = stack.call("POST", "/v1/engine/consolidate/", raw=b"a=1&b=2", headers=headers)

    assert status == 400 and fields_named(body) == ["body"]


# -- framing, over real HTTP --------------------------------------------------------------------


def raw_request(
    base: str, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, bytes]:
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders(body or None)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


AUTH = {"Authorization": f"Bearer {LOCAL_KEY}", "Content-Type": "application/json"}


def test_a_body_over_six_megabytes_is_a_413_before_it_is_read(stack: LocalStack) -> None:
    with serve_http(stack) as base:
        status, body = raw_request(
            base, "POST", "/v1/engine/embed/", {**AUTH, "Content-Length": str(7 * 1024 * 1024)}
        )
        after = raw_request(base, "GET", "/v1/engine/health/", {})

    assert status == 413 and b"6291456 bytes" in body
    assert after[0] == 200


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Length": "abc"}, 400),
        ({"Content-Length": "-5"}, 400),
        ({"Transfer-Encoding": "chunked"}, 411),
    ],
)
def test_a_badly_framed_body_is_refused_and_the_server_keeps_serving(
    stack: LocalStack, headers: dict[str, str], status: int
) -> None:
    with serve_http(stack) as base:
        refused = raw_request(base, "POST", "/v1/engine/consolidate/", {**AUTH, **headers})
        after = raw_request(base, "GET", "/v1/engine/health/", {})

    assert refused[0] == status and json.loads(refused[1])["status"] == "error"
    assert after[0] == 200


def test_an_unknown_path_is_404_and_a_wrong_method_405_with_allow(stack: LocalStack) -> None:
    missing = stack.call("GET", "/v1/engine/nothing-here/")
    wrong = stack.call("GET", "/v1/engine/consolidate/")

    assert missing[0] == 404
    assert wrong[0] == 405 and wrong[1]["Allow"] == "POST"
