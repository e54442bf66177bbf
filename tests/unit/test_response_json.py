"""Every handler's answer is written by `edge.http.serialize_json`: compact JSON with its text as
UTF-8, the same whichever encoder writes it (orjson where installed, else `json`), and a large
answer decoded in pieces so that no single call holds the interpreter for long (issue 42)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import IntEnum, StrEnum
from typing import Any

import pytest

from memory_engine.edge import http
from memory_engine.edge.http import DECODE_PIECE_BYTES, decoded_in_pieces, serialize_json


class Kind(StrEnum):
    MEMORY = "memory"


class Level(IntEnum):
    HIGH = 3


@dataclass
class Point:
    x: int
    label: str


def by_json(body: Any) -> str:
    """What the resolver wrote before orjson: `json` with Powertools' Encoder."""
    from aws_lambda_powertools.shared.json_encoder import Encoder

    return json.dumps(body, separators=(",", ":"), cls=Encoder, ensure_ascii=False)


BODIES: list[Any] = [
    {"status": "success", "data": [], "message": None, "tokens": None},
    {"content": "고양이 모찌는 리스본에서 태어났어요", "score": 0.712345, "parts": {"dense": -1e-06}},
    {"emoji": "🐈 \u00e9\u4e2d", "escapes": 'quote " backslash \\ tab \t line \n nul \x00 del \x7f'},
    {"floats": [0.1, 1e16, 1.5e-07, 123456.789, -0.0, 3.0], "ints": [0, -1, 2**63 - 1]},
    {"bool": [True, False]},
    {"nested": [[{"a": [1, {"b": None}]}]], "empty": {}, "none": [None]},
    {"kind": Kind.MEMORY, "level": Level.HIGH, "decimal": Decimal("1.25"), "point": Point(1, "p")},
]


@pytest.mark.parametrize("body", BODIES)
def test_an_answer_reads_as_the_json_it_always_was(body: Any) -> None:
    # When a body is written
    written = serialize_json(body)

    # Then it holds the same values as `json` wrote, as compact (floats may be spelt `1e-7` for
    # `1e-07`), with non-ASCII text unescaped
    assert json.loads(written) == json.loads(by_json(body))
    assert len(written) <= len(by_json(body))


def test_korean_text_is_written_as_korean_not_escapes() -> None:
    assert serialize_json({"content": "어제 부산에 갔어"}) == '{"content":"어제 부산에 갔어"}'


@pytest.mark.parametrize(
    "body",
    [{"big": 2**70}, {1: "a key that is not a string"}],
    ids=["an integer past 64 bits", "a key that is not a string"],
)
def test_what_orjson_will_not_write_is_written_by_json(body: Any) -> None:
    assert serialize_json(body) == by_json(body)


def test_a_datetime_is_refused_as_json_refuses_it() -> None:
    # The resolver hands over JSON-ready values: a datetime reaching the writer is a bug either way.
    with pytest.raises(TypeError):
        serialize_json({"at": datetime(2026, 12, 6, tzinfo=UTC)})


def test_without_orjson_the_answer_is_written_by_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "_orjson", None)

    assert serialize_json(BODIES[1]) == by_json(BODIES[1])


def test_a_large_answer_is_decoded_in_pieces_whole() -> None:
    # Given UTF-8 of mixed scripts whose characters straddle the pieces' edges
    text = ("a 고양이 🐈 é " * (3 * DECODE_PIECE_BYTES // 7))[: 3 * DECODE_PIECE_BYTES]
    encoded = text.encode()
    assert len(encoded) > 2 * DECODE_PIECE_BYTES

    # When it is decoded a piece at a time, Then it is the text it was
    assert decoded_in_pieces(encoded) == text


def test_a_large_answer_is_written_whole() -> None:
    long_text = "Alex: we went to the lake yesterday 🐈 고양이\n" * 20_000
    body = {"data": [{"content": long_text, "evidence": [{"text": long_text}]} for _ in range(3)]}

    assert json.loads(serialize_json(body)) == body
