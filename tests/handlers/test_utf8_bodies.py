"""Success bodies are UTF-8 JSON like the errors: Korean reads as Korean (curl shows it), never as
`\\uXXXX` escapes, on every dialect."""

from __future__ import annotations

import pytest

from tests.handlers.dialects import Answer, call

pytestmark = pytest.mark.usefixtures("engine")

WORDS = "후추"  # in every events/ sample below (the dog's name)


def readable(answer: Answer) -> bool:
    return answer.status == 200 and "\\u" not in answer.text and WORDS in answer.text


def test_a_native_retrieve_answers_korean_as_utf8() -> None:
    call("consolidate")

    assert readable(call("retrieve"))


def test_a_game_memory_answers_korean_as_utf8() -> None:
    call("consolidate")

    assert readable(call("game_memory"))


def test_a_memory_bank_answer_is_utf8() -> None:
    created = call("bank_create", {"fact": f"강아지 이름은 {WORDS}.", "scope": {"user_id": "123"}})

    assert readable(created)
