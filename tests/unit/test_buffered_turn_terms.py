"""Buffered turns' words are analysed once, a bounded head of each, within a budget per retrieve:
a retrieve of a thread with very long buffered turns does no work that grows with their length
(issue 42: A's retrieves of 2 x 100,000-character turns held the interpreter for seconds)."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import uuid4

import pytest

from memory_engine.engine import Engine, TermCache
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.retrieval import features
from memory_engine.retrieval.bm25 import TermCounts
from memory_engine.retrieval.features import AnalysedText
from memory_engine.usecases import consolidate, retrieve
from memory_engine.usecases.turn_terms import LEXICAL_MAX_CHARS
from tests.fakes.engine import fake_engine

TENANT, THREAD = "acme", "t1"
LONG = 100_000  # characters of each long query and answer, as in bench/speed/tenant_fairness.py


class Analyser:
    """Counts the characters the analyser reads of the buffered turns (the question apart)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.calls: list[int] = []

    def __call__(self, text: str) -> list[str]:
        if self.marker in text:
            self.calls.append(len(text))
        return TOKENIZE(text)


TOKENIZE = features.tokenize


@pytest.fixture
def marker() -> str:
    return uuid4().hex  # words no other test says (the analysis cache is the engine's)


@pytest.fixture
def analyser(marker: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Analyser]:
    counting = Analyser(marker)
    monkeypatch.setattr(features, "tokenize", counting)
    yield counting


def long_text(marker: str, n: int, tail: str = "") -> str:
    line = f"Mira: the lighthouse keeper {marker} counted ships number {n} again.\n"
    return (line * (LONG // len(line) + 1))[: LONG - len(tail)] + tail


def say_long(engine: Engine, marker: str, count: int, tail: str = "") -> None:
    for n in range(count):
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": THREAD,
            "new_dialog": {
                "uuid": f"d{n:02d}",
                "query": long_text(marker, n),
                "answer": long_text(marker, n, tail),
            },
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))


def gather(engine: Engine, query: str) -> retrieve.Gathered:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": [THREAD], "user_input": {"query": query}, "options": {"limit": 50}}
    )
    return retrieve.gather(engine, TENANT, request)


def test_a_long_buffered_turn_is_analysed_once_and_only_its_head(marker: str, analyser: Analyser) -> None:
    # Given two buffered turns of 2 x 100,000 characters, and a budget that covers both heads
    engine = fake_engine(extraction_threshold=1000, retrieve_analyse_budget_chars=2 * LEXICAL_MAX_CHARS)
    say_long(engine, marker, 2)

    # When the thread is retrieved twice
    gather(engine, "lighthouse ships")
    first = list(analyser.calls)
    gather(engine, "who counted the ships")

    # Then the first retrieve read each turn's head once, and the second read nothing again
    assert first == [LEXICAL_MAX_CHARS, LEXICAL_MAX_CHARS]
    assert analyser.calls == first


def test_one_retrieve_analyses_long_turns_within_its_budget_newest_first(
    marker: str, analyser: Analyser
) -> None:
    # Given five long buffered turns and a budget of one turn's head per retrieve
    engine = fake_engine(extraction_threshold=1000, retrieve_analyse_budget_chars=LEXICAL_MAX_CHARS)
    say_long(engine, marker, 5)

    # When the thread is retrieved five times
    lexical: list[set[str]] = []
    for _ in range(5):
        found = gather(engine, "lighthouse").sources[1]
        lexical.append({turn.key.rsplit(":", 1)[-1] for turn in found if turn.bm25 > 0})

    # Then each retrieve analysed one head more, the newest turns first: never more than its budget
    assert analyser.calls == [LEXICAL_MAX_CHARS] * 5
    assert lexical == [
        {"d04"},
        {"d04", "d03"},
        {"d04", "d03", "d02"},
        {"d04", "d03", "d02", "d01"},
        {"d04", "d03", "d02", "d01", "d00"},
    ]


def test_a_word_past_the_head_of_a_long_buffered_turn_does_not_match_its_words(marker: str) -> None:
    # Given a long buffered turn whose answer ends with a word said nowhere else
    engine = fake_engine(extraction_threshold=1000)
    say_long(engine, marker, 1, tail=" zeppelin")

    # When asked about a word of its head, and about the word at its end
    head = gather(engine, "lighthouse keeper").sources[1]
    tail = gather(engine, "zeppelin").sources[1]

    # Then the head's word scores and the end's does not (that turn is found by its vector)
    assert [turn.bm25 > 0 for turn in head] == [True]
    assert [turn.bm25 for turn in tail] == [0.0]


def test_a_long_buffered_turns_speakers_come_from_its_whole_text(marker: str) -> None:
    # Given a long buffered turn: its user's line fills the head, its assistant's line is past it
    engine = fake_engine(extraction_threshold=1000)
    say_long(engine, marker, 1)

    # When a question names the assistant (the answer's speaker)
    [candidate] = [
        turn for turn in gather(engine, "what did the assistant say").turns if turn.memory_id is None
    ]

    # Then the turn still matches that speaker
    assert candidate.features["speaker"] == 1.0


def _analysed(terms: int) -> AnalysedText:
    return AnalysedText(TermCounts({f"t{n}": 1 for n in range(terms)}, terms), ())


def test_the_term_cache_is_bounded_by_the_terms_it_holds() -> None:
    cache = TermCache(capacity_terms=100)

    for n in range(5):
        cache.put(f"k{n}", _analysed(30))

    # 150 terms were put: the oldest went until 90 are held; the newest stay, and a get refreshes
    assert [cache.get(f"k{n}") is not None for n in range(5)] == [False, False, True, True, True]
    cache.get("k2")
    cache.put("k5", _analysed(30))
    assert [cache.get(f"k{n}") is not None for n in (2, 3, 4, 5)] == [True, False, True, True]
