"""Text that is not Unicode text, in any field of any route: a 4xx naming the field, never a 500,
nothing written, queued or sent upstream.

JSON may spell a lone UTF-16 surrogate (`"\\ud800"`), which Python decodes into a string UTF-8
cannot encode; raw bytes may not be UTF-8 at all. The cases are generated from functions/routes.py
and each route's events/ sample: every string of a route's body, every object key, its query
string, path parameters and headers get each kind of unencodable text, so a route added there is
fuzzed without edits here.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlparse

import pytest

from functions.routes import ROUTES
from memory_engine.edge.unicode_text import printable
from tests.fakes.ports import RecordingChat
from tests.fakes.stack import LOCAL_KEY, LocalStack, serve_http

EVENTS = Path(__file__).resolve().parents[2] / "events"
TENANT = "tenant-a"
UNENCODABLE = {
    "a lone high surrogate": "\ud800",
    "a lone low surrogate": "\udfff",
    "a surrogate inside a word": "ab\ud83dcd",
    "a pair written backwards": "\ude00\ud83d",
    "a high surrogate after an emoji": "😀\udbff",
    "a surrogate at the end of a long text": "가" * 3000 + "\udc80",
}
NOT_UTF8 = {
    "a surrogate encoded as UTF-8 (CESU-8)": b"\xed\xa0\x80",
    "an overlong slash": b"\xc0\xaf",
    "Latin-1": b"caf\xe9",
    "a cut sequence": b"\xe2\x82",
}
GAME = {"game_memory", "game_record_memory"}
OPENAI = {"chat_completions", "chat_models", "forget_user"}
BODY_ROUTES = [
    route for route in ROUTES if json.loads((EVENTS / f"{route.function}.json").read_text()).get("body")
]


@dataclass(frozen=True)
class Sample:
    method: str
    path: str
    query: dict[str, str]
    path_parameters: dict[str, str]
    body: Any


def sample(function: str) -> Sample:
    event = json.loads((EVENTS / f"{function}.json").read_text())
    body = json.loads(event["body"]) if event.get("body") else None
    return Sample(
        event["httpMethod"],
        event["path"],
        event.get("queryStringParameters") or {},
        event.get("pathParameters") or {},
        body,
    )


def places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], bool]]:
    """(where, is_key) for every string of a JSON value and every object key in it."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*path, key), True
            yield from places(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from places(child, (*path, index))
    elif isinstance(value, str):
        yield path, False


def replaced(body: Any, where: tuple[Any, ...], is_key: bool, text: str) -> tuple[Any, str]:
    """A copy of `body` with the string (or key) at `where` replaced by `text`, and the field name
    an answer should give for it."""
    copy = json.loads(json.dumps(body))
    parent = copy
    for part in where[:-1]:
        parent = parent[part]
    last = where[-1]
    if is_key:
        parent[text] = parent.pop(last)
        return copy, ".".join([*map(str, where[:-1]), printable(text)])
    parent[last] = text
    return copy, ".".join(map(str, where))


def fields_named(function: str, answer: Any) -> list[str]:
    """The fields an error answer names, in the route's dialect."""
    if function in GAME:
        return [error["field"] for error in (answer.get("data") or {}).get("errors", [])]
    if function in OPENAI:
        return [answer["error"]["param"]]
    return [error["field"] for error in answer["errors"]]


def assert_nothing_happened(stack: LocalStack) -> None:
    assert stack.engine.store.list_sessions(TENANT) == []
    assert list(stack.engine.store.iter_memories(TENANT)) == []
    assert stack.queue.pending_count() == 0
    assert isinstance(stack.engine.chat, RecordingChat) and stack.engine.chat.bodies == []


def url(s: Sample, query: dict[str, str] | None = None) -> str:
    query = s.query if query is None else query
    return s.path + ("?" + urlencode(query) if query else "")


@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda route: f"{route.method} {route.path}")
def test_unencodable_text_anywhere_in_a_body_is_a_422_naming_the_field(stack: LocalStack, route: Any) -> None:
    # Given the route's sample request, and a key of the tenant
    s, key = sample(route.function), stack.key_for(TENANT)
    wrong: list[str] = []
    cases = 0
    # When each string and each key of its body in turn holds each kind of unencodable text
    for where, is_key in places(s.body):
        for kind, text in UNENCODABLE.items():
            body, field = replaced(s.body, where, is_key, text)
            raw = json.dumps(body).encode()  # ASCII, with the surrogates as \u escapes
            status, _, answer = stack.call(route.method, url(s), raw=raw, key=key)
            cases += 1
            # Then it is refused with a 422 that names that field, whatever the route's dialect
            if status != 422 or field not in fields_named(route.function, answer):
                wrong.append(f"{field} with {kind}: {status} {str(answer)[:200]}")
    assert cases >= len(UNENCODABLE) and wrong == []
    # And nothing was stored, queued or sent to the chat model
    assert_nothing_happened(stack)


@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda route: f"{route.method} {route.path}")
def test_bytes_that_are_not_utf8_anywhere_in_a_body_are_a_400_saying_so(
    stack: LocalStack, route: Any
) -> None:
    s, key = sample(route.function), stack.key_for(TENANT)
    wrong: list[str] = []
    for where, is_key in places(s.body):
        for kind, raw_text in NOT_UTF8.items():
            body, field = replaced(s.body, where, is_key, "@PLACE@")
            raw = json.dumps(body).encode().replace(b"@PLACE@", raw_text)

            status, _, answer = stack.call(route.method, url(s), raw=raw, key=key)

            if status != 400 or "UTF-8" not in json.dumps(answer):
                wrong.append(f"{field} with {kind}: {status} {str(answer)[:200]}")
    assert wrong == []
    assert_nothing_happened(stack)


@pytest.mark.parametrize("route", ROUTES, ids=lambda route: f"{route.method} {route.path}")
def test_unencodable_text_in_the_query_path_or_headers_is_a_422_naming_it(
    stack: LocalStack, route: Any
) -> None:
    # Given the route's sample request (the local server hands the handler what it was sent, as an
    # API Gateway event would carry it)
    s, key = sample(route.function), stack.key_for(TENANT)
    body = None if s.body is None else json.dumps(s.body).encode()
    query_name = next(iter(s.query), "page")
    path_name = next(iter(s.path_parameters), None)
    requests: dict[str, tuple[str, dict[str, str]]] = {
        # not percent-encoded: the handler gets the text itself, surrogate included
        f"query.{query_name}": (f"{url(s, {})}?{query_name}=x\ud800", {}),
        "headers.Application-ID": (url(s), {"Application-ID": "game\udfff"}),
    }
    if path_name is not None:
        value = s.path_parameters[path_name]
        requests[f"path.{path_name}"] = (url(s).replace(value, value + "\ud800", 1), {})
    for field, (target, headers) in requests.items():
        sent = {"Content-Type": "application/json", "Authorization": f"Bearer {key}", **headers}
        # When one of them holds a lone surrogate
        status, _, answer = stack.call(route.method, target, raw=body, headers=sent)
        # Then the request is refused before the route runs, naming where
        assert status == 422, (field, status, answer)
        assert field in fields_named(route.function, answer), (field, answer)
    assert_nothing_happened(stack)


def test_odd_bytes_in_the_path_query_and_headers_over_http_are_never_a_5xx(stack: LocalStack) -> None:
    # Given the local server over real HTTP
    statuses: dict[str, int] = {}
    with serve_http(stack) as base:
        address = urlparse(base)
        for route in ROUTES:
            s = sample(route.function)
            body = b"" if s.body is None else json.dumps(s.body).encode()
            escaped = {"%ED%A0%80": "CESU-8 surrogate", "%uD800": "%u escape", "%FF%FE": "not UTF-8"}
            for piece, kind in escaped.items():
                target = s.path.rstrip("/") + piece + "?q=" + piece
                for where, path, header in (("path", target, "ok"), ("header", url(s), "caf\xe9 \ud7ff")):
                    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
                    try:
                        # When a percent-encoded surrogate or a non-UTF-8 byte comes in the path, the
                        # query string or a header (sent as Latin-1 bytes)
                        connection.putrequest(route.method, path, skip_accept_encoding=True)
                        connection.putheader("Authorization", f"Bearer {LOCAL_KEY}")
                        connection.putheader(
                            "Application-ID", header.encode("utf-8", "replace").decode("latin-1")
                        )
                        connection.putheader("Content-Length", str(len(body)))
                        connection.endheaders(body)
                        statuses[f"{route.method} {route.path} {where} {kind}"] = (
                            connection.getresponse().status
                        )
                    finally:
                        connection.close()
    # Then every answer is a success or a 4xx, never a server error
    assert len(statuses) == len(ROUTES) * 6
    assert {name: status for name, status in statuses.items() if status >= 500} == {}


def test_a_surrogate_pair_and_a_written_backslash_u_are_text_and_stored_as_sent(stack: LocalStack) -> None:
    # Given a turn whose query spells 😀 as a pair of escapes and an answer that writes "\ud800"
    # as six characters (an escaped backslash), both valid text
    raw = (
        b'{"session_uuid": "s1", "parent_session_uuid": "t1",'
        b' "new_dialog": {"uuid": "d1", "query": "smile \\ud83d\\ude00", "answer": "write \\\\ud800"}}'
    )
    # When it is consolidated
    status, _, _ = stack.call("POST", "/v1/engine/consolidate/", raw=raw, key=stack.key_for(TENANT))
    # Then it is stored as sent
    [turn] = stack.engine.store.list_turns(TENANT, "s1")
    assert status == 200 and (turn.query, turn.answer) == ("smile 😀", "write \\ud800")


def test_a_body_of_many_bad_strings_gets_an_answer_of_bounded_size(stack: LocalStack) -> None:
    # Given a fact whose scope has 10,000 keys with a lone surrogate each
    scope = {f"k{n}": f"v\ud800{n}" for n in range(10_000)}
    # When it is sent
    status, _, answer = stack.call("POST", "/v1/memories", {"fact": "f", "scope": scope})
    # Then every field is not listed: a few in the message, at most 50 in the errors
    assert status == 422 and len(answer["errors"]) == 50
    assert "scope.k0" in answer["message"] and "and 9995 more" in answer["message"]
