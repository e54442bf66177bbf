"""Every route but health, with no key, a malformed key, a wrong or revoked key → 401.

Generated from functions/routes.py: a route added there is in this matrix without edits here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from functions.routes import ROUTES
from memory_engine.ports.clock import SystemClock
from memory_engine.usecases import keys
from tests.fakes.stack import LocalStack
from tests.security.samples import sample_request

AUTHENTICATED = [route.function for route in ROUTES if route.auth]
MALFORMED_AUTHORIZATION = {
    "empty header": "",
    "scheme only": "Bearer",
    "unknown scheme": "Basic dXNlcjpwYXNz",
    "not a key": "Bearer hello",
    "bad key id": "Bearer me_XYZ_abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    "key with spaces": "Bearer me_0123456789ab_ abc",
    "non-ascii key": "Bearer me_0123456789ab_" + "키" * 40,
    "very long key": "Bearer me_0123456789ab_" + "a" * 10_000,
}


# The routes whose clients read another error envelope than the native one (docs/api.md §6).
GAME_ENVELOPE = {"game_memory", "game_record_memory"}
OPENAI_ENVELOPE = {"chat_completions", "chat_models", "forget_user"}


def assert_unauthorized(answer: tuple[int, dict[str, str], object], function: str) -> None:
    """A 401 with its challenge, in the envelope of the route's dialect."""
    status, headers, body = answer
    assert status == 401
    assert headers.get("WWW-Authenticate", "").startswith("Bearer")
    assert isinstance(body, dict)
    if function in GAME_ENVELOPE:
        assert body["code"] == 401 and "API key" in body["msg"]
    elif function in OPENAI_ENVELOPE:
        assert body["error"]["type"] == "authentication_error" and "API key" in body["error"]["message"]
    else:
        assert body["status"] == "error" and "API key" in body["message"]


@pytest.mark.parametrize("function", AUTHENTICATED)
def test_a_request_without_a_key_is_unauthorized(stack: LocalStack, function: str) -> None:
    sample = sample_request(function)

    assert_unauthorized(stack.call(sample.method, sample.path, sample.body, key=None), function)


@pytest.mark.parametrize("header", MALFORMED_AUTHORIZATION.values(), ids=list(MALFORMED_AUTHORIZATION))
@pytest.mark.parametrize("function", AUTHENTICATED)
def test_a_request_with_a_malformed_key_is_unauthorized(
    stack: LocalStack, function: str, header: str
) -> None:
    sample = sample_request(function)

    answer = stack.call(sample.method, sample.path, sample.body, headers={"Authorization": header})

    assert_unauthorized(answer, function)


@pytest.mark.parametrize("function", AUTHENTICATED)
def test_a_well_formed_key_with_the_wrong_secret_is_unauthorized(stack: LocalStack, function: str) -> None:
    sample = sample_request(function)
    real = stack.key_for("tenant-a")
    forged = real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB")

    assert_unauthorized(stack.call(sample.method, sample.path, sample.body, key=forged), function)


@pytest.mark.parametrize("function", AUTHENTICATED)
def test_a_revoked_key_is_unauthorized_and_writes_nothing(stack: LocalStack, function: str) -> None:
    sample = sample_request(function)
    key = stack.key_for("tenant-a")
    keys.revoke(stack.key_store, SystemClock().now(), key.split("_")[1])

    answer = stack.call(sample.method, sample.path, sample.body, key=key)

    assert_unauthorized(answer, function)
    assert stack.engine.store.get_session("tenant-a", "session-1") is None


@pytest.mark.parametrize("function", AUTHENTICATED)
def test_a_rotated_key_past_its_grace_period_is_unauthorized(stack: LocalStack, function: str) -> None:
    sample = sample_request(function)
    old = stack.key_for("tenant-a")
    now = SystemClock().now()
    fresh = keys.rotate(stack.key_store, now - timedelta(minutes=2), old.split("_")[1], timedelta(minutes=1))

    assert_unauthorized(stack.call(sample.method, sample.path, sample.body, key=old), function)
    assert stack.call(sample.method, sample.path, sample.body, key=fresh.key)[0] != 401


@pytest.mark.parametrize("function", AUTHENTICATED)
def test_a_store_key_and_the_local_key_are_both_accepted(stack: LocalStack, function: str) -> None:
    sample = sample_request(function)

    by_store_key = stack.call(sample.method, sample.path, sample.body, key=stack.key_for("tenant-a"))
    by_local_key = stack.call(sample.method, sample.path, sample.body)

    assert by_store_key[0] not in {401, 403, 429} and by_local_key[0] not in {401, 403, 429}


def test_health_needs_no_key(stack: LocalStack) -> None:
    assert stack.call("GET", "/v1/engine/health/", key=None)[0] == 200


def test_the_openapi_document_needs_no_key(stack: LocalStack) -> None:
    status, _, spec = stack.call("GET", "/v1/openapi.json", key=None)

    assert status == 200 and spec["openapi"].startswith("3.1")


@pytest.mark.parametrize(
    ("path", "read", "kind"),
    [
        ("/open/game/memory", lambda body: (body["code"], body["msg"]), 405),
        (
            "/v1/chat/completions",
            lambda body: (body["error"]["type"], body["error"]["message"]),
            "invalid_request_error",
        ),
        ("/v1/engine/retrieve/", lambda body: (body["status"], body["message"]), "error"),
    ],
)
def test_a_method_a_route_does_not_take_is_a_405_in_its_dialects_envelope(
    stack: LocalStack, path: str, read: Callable[[dict[str, Any]], tuple[object, str]], kind: object
) -> None:
    status, headers, body = stack.call("GET", path)

    assert status == 405 and headers["Allow"] == "POST"
    assert isinstance(body, dict)
    assert read(body) == (kind, f"GET is not allowed on {path}: use POST.")
