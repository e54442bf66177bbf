"""The LLM key on AWS: read at run time from Secrets Manager, cached, never from the environment."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from memory_engine.adapters.aws import clients
from memory_engine.adapters.openai.upstream import HttpChatUpstream
from memory_engine.composition.providers.chat import llm_api_key
from memory_engine.errors import Unavailable
from memory_engine.settings import Settings
from tests.fakes.aws import REGION, moto_aws

SECRET = "memory-engine/openai"


@pytest.fixture
def secrets() -> Iterator[Any]:
    with moto_aws():
        client = clients.client("secretsmanager", REGION)
        client.create_secret(Name=SECRET, SecretString="sk-from-secrets-manager")
        yield client


def reads_of_the_secret(client: Any) -> list[str]:
    """Counts GetSecretValue calls made through the shared client from now on."""
    calls: list[str] = []
    client.meta.events.register(
        "before-call.secrets-manager.GetSecretValue", lambda **_: calls.append("GetSecretValue")
    )
    return calls


def test_a_configured_secret_gives_a_key_read_when_first_asked_for(secrets: Any) -> None:
    # Given settings that name the secret (as the stack sets them), no key in the environment
    settings = Settings(openai_api_key_secret=SECRET, aws_region=REGION)
    calls = reads_of_the_secret(secrets)
    # When the key is resolved
    key = llm_api_key(settings)
    # Then nothing is read until it is asked for, and then the secret's value is the key
    assert callable(key)
    assert calls == []
    assert key() == "sk-from-secrets-manager"
    assert calls == ["GetSecretValue"]


def test_the_key_is_kept_while_fresh(secrets: Any) -> None:
    calls = reads_of_the_secret(secrets)
    key = llm_api_key(Settings(openai_api_key_secret=SECRET, aws_region=REGION))
    assert callable(key)
    assert (key(), key()) == ("sk-from-secrets-manager", "sk-from-secrets-manager")
    assert calls == ["GetSecretValue"]


def test_a_rotated_key_is_read_once_the_kept_one_is_stale(secrets: Any) -> None:
    # Given a reader that keeps the key no time at all
    settings = Settings(openai_api_key_secret=SECRET, openai_api_key_max_age_seconds=0, aws_region=REGION)
    key = llm_api_key(settings)
    assert callable(key)
    assert key() == "sk-from-secrets-manager"
    # When the secret is rotated / Then the next request reads the new key
    secrets.put_secret_value(SecretId=SECRET, SecretString="sk-rotated")
    assert key() == "sk-rotated"


def test_a_key_in_the_environment_wins_for_local_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    assert llm_api_key(Settings(openai_api_key_secret=SECRET)) == "sk-local"


def test_a_missing_secret_is_unavailable_naming_the_variable_not_the_secret(secrets: Any) -> None:
    key = llm_api_key(Settings(openai_api_key_secret="memory-engine/absent", aws_region=REGION))
    assert callable(key)
    with pytest.raises(Unavailable, match="MEMORY_ENGINE_OPENAI_API_KEY_SECRET") as refused:
        key()
    assert "absent" not in str(refused.value)


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str | None]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        _Recorder.seen.append(self.headers.get("Authorization"))
        body = json.dumps({"id": "c", "object": "chat.completion", "choices": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


def test_the_chat_upstream_asks_a_callable_key_on_every_request() -> None:
    # Given an upstream whose key comes from a reader (a rotation between two requests)
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    keys = iter(["sk-first", "sk-rotated"])
    upstream = HttpChatUpstream(f"http://127.0.0.1:{server.server_address[1]}/v1", api_key=lambda: next(keys))
    try:
        # When it is called twice
        upstream.complete({"model": "m", "messages": []})
        upstream.complete({"model": "m", "messages": []})
    finally:
        server.shutdown()
        server.server_close()
    # Then each request carried the key current then
    assert _Recorder.seen[-2:] == ["Bearer sk-first", "Bearer sk-rotated"]
