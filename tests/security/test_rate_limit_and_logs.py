"""A key over its rate gets 429 with Retry-After; logs never hold an API key or the user's words."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memory_engine.edge.logsafe import SERVICE, logger, redact, redact_foreign
from memory_engine.models.domain import Turn
from memory_engine.ports import Extraction, ExtractionContext
from memory_engine.usecases import consolidate
from tests.contract.builders import stored_turn
from tests.fakes.stack import LocalStack, local_stack

SECRET_TEXT = "the vault code is PAPAYA-7731"


def say(stack: LocalStack, key: str, n: int, text: str = "hello", **options: object) -> int:
    body = {
        "session_uuid": "s1",
        "parent_session_uuid": "t1",
        "new_dialog": {"uuid": f"d{n}", "query": text, "answer": "ok"},
        "options": options,
    }
    return stack.call("POST", "/v1/engine/consolidate/", body, key=key)[0]


# -- rate limit ---------------------------------------------------------------------------------


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[LocalStack]:
    with local_stack(tmp_path, rate=0.5, burst=3) as stack:
        yield stack


def test_a_key_past_its_burst_gets_429_with_retry_after_in_seconds(limited: LocalStack) -> None:
    key = limited.key_for("acme")
    statuses = [say(limited, key, n) for n in range(3)]

    status, headers, body = limited.call("POST", "/v1/engine/embed/", {"text": "x"}, key=key)

    assert statuses == [200, 200, 200]
    assert status == 429 and headers["Retry-After"] == "2"
    assert body["status"] == "error" and "retry after 2 s" in body["message"]


def test_a_throttled_request_writes_nothing(limited: LocalStack) -> None:
    key = limited.key_for("acme")
    for n in range(3):
        say(limited, key, n)

    assert say(limited, key, 99) == 429
    assert stored_turn(limited.engine.store, "acme", "s1", "d99") is None


def test_one_keys_throttling_leaves_other_keys_alone(limited: LocalStack) -> None:
    busy = limited.key_for("acme")
    for n in range(4):
        say(limited, busy, n)

    assert say(limited, limited.key_for("globex"), 0) == 200


def test_unauthenticated_routes_are_not_throttled(limited: LocalStack) -> None:
    assert {limited.call("GET", "/v1/engine/health/", key=None)[0] for _ in range(10)} == {200}


# -- logs ---------------------------------------------------------------------------------------


class Capture(logging.Handler):
    """Everything a record carries: message, extras and any exception text, as one string each."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = " ".join(f"{name}={value}" for name, value in vars(record).items() if name != "exc_info")
        if record.exc_info:
            text += logging.Formatter().formatException(record.exc_info)
        self.lines.append(text)


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[Capture]:
    capture = Capture()
    logger()  # the Powertools logger exists (and has its filters) before the handler goes on
    targets = [logging.getLogger(SERVICE), logging.getLogger("memory_engine")]
    for target in targets:
        target.addHandler(capture)
    caplog.set_level(logging.DEBUG, logger="memory_engine")
    yield capture
    for target in targets:
        target.removeHandler(capture)


class LeakyExtractor:
    """Fails the way a model client might: quoting the dialogue in its error."""

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        raise RuntimeError(f"model refused: {turns[0].query}")


def test_handling_requests_and_failures_logs_neither_keys_nor_dialogue(
    tmp_path: Path, logs: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    with local_stack(tmp_path, extractor=LeakyExtractor()) as stack:
        key = stack.key_for("acme")
        say(stack, key, 1, SECRET_TEXT, force_summary=True)
        stack.drain()  # extraction fails, quoting the text
        stack.call(
            "POST",
            "/v1/engine/retrieve/",
            {"parent_session_uuids": ["t1"], "user_input": {"query": SECRET_TEXT}},
            key=key,
        )
        stack.call("POST", "/v1/engine/embed/", {"text": SECRET_TEXT}, key=key[:-2] + "zz")

        def crash(*args: object) -> None:
            raise ValueError(f"unexpected while storing {SECRET_TEXT} for {key}")

        monkeypatch.setattr(consolidate, "run", crash)
        crashed = say(stack, key, 2, SECRET_TEXT)

    text = "\n".join(logs.lines)
    assert crashed == 500
    assert "RuntimeError" in text and "ValueError" in text  # the failures were logged...
    assert (
        "PAPAYA" not in text and key not in text and key.split("_", 2)[2] not in text
    )  # ...without the words or the key


def test_an_error_body_never_carries_a_trace_or_internal_names(
    stack: LocalStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*args: object) -> None:
        raise KeyError("sqlite3 table turns at /srv/data/memory-engine.sqlite3")

    monkeypatch.setattr(consolidate, "run", crash)

    status, _, body = stack.call(
        "POST",
        "/v1/engine/consolidate/",
        {"session_uuid": "s", "parent_session_uuid": "t", "new_dialog": {"uuid": "d", "query": "q"}},
    )

    assert status == 500
    assert body == {"status": "error", "message": "Internal error; the request may be retried.", "errors": []}


def test_redaction_removes_every_key_form() -> None:
    store_key = "me_0123456789ab_" + "A" * 43
    text = f"Authorization: Bearer abc.def and {store_key} and Token xyz"

    cleaned = redact(text)

    assert "abc.def" not in cleaned and "me_0123456789ab" not in cleaned and "xyz" not in cleaned
    assert cleaned.count("[redacted]") == 3


@pytest.mark.parametrize(
    "key", ["sk-live-4f9a8b7c6d5e4f3a2b1c", "sk-proj-AbCdEfGhIjKlMnOpQrSt_uv", "sk_live_51HxYzAbCdEfGhIjKl"]
)
def test_redaction_removes_a_model_providers_key(key: str) -> None:
    assert redact(f"Incorrect API key provided: {key}.") == "Incorrect API key provided: [redacted]."


def test_an_upstreams_own_text_loses_its_urls_and_keys_but_keeps_the_words() -> None:
    text = "proxy: http://10.0.3.7:8000/v1?sig=abc (s3://bucket/x) failed; key sk-live-4f9a8b7c6d5e4f3a2b1c"

    assert redact_foreign(text) == "proxy: [url] ([url]) failed; key [redacted]"
