"""Every request has a deadline, and work stops once its client has gone: the deadline itself, and
a retrieve over long buffered turns that answers in time with what it has found."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from memory_engine import deadline
from memory_engine.deadline import Deadline, of_context
from memory_engine.engine import Engine
from memory_engine.errors import Cancelled, DeadlineExceeded
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.ports import EmbedMode
from memory_engine.usecases import consolidate, retrieve
from tests.fakes.engine import local_engine
from tests.fakes.ports import HashEmbedder

TENANT, THREAD = "acme", "t1"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class TimedEmbedder(HashEmbedder):
    """Each call moves the clock on by `query_s` or `passage_s` seconds; counts the passages."""

    def __init__(self, clock: Clock, query_s: float = 0.0, passage_s: float = 0.0) -> None:
        super().__init__()
        self.clock, self.query_s, self.passage_s = clock, query_s, passage_s
        self.passages = 0

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if mode == "passage":
            self.passages += len(texts)
        self.clock.now += self.passage_s if mode == "passage" else self.query_s
        return super().embed(texts, mode)


@pytest.fixture
def engine() -> Iterator[Engine]:
    with local_engine(
        extraction_threshold=1000, retrieve_embed_budget=64, retrieve_embed_budget_chars=10**6
    ) as built:
        yield built


def say_long(engine: Engine, count: int, chars: int = 2000) -> None:
    for n in range(count):
        text = f"turn {n} about the lighthouse keeper " + "and the long winter " * (chars // 20)
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": THREAD,
            "new_dialog": {"uuid": f"d{n}", "query": text},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))


def ask(engine: Engine) -> list[str]:
    request = RetrieveRequest(
        parent_session_uuids=[THREAD], user_input={"query": "lighthouse"}, options={"limit": 50}
    )
    return [hit.memory_id for hit in retrieve.run(engine, TENANT, request).data]


def test_a_deadline_expires_after_its_seconds() -> None:
    clock = Clock()
    limit = Deadline(2.0, clock=clock)
    limit.check()

    clock.now = 2.0

    with pytest.raises(DeadlineExceeded, match="2 s deadline"):
        limit.check()


def test_a_cancelled_caller_stops_the_work_before_its_deadline() -> None:
    with pytest.raises(Cancelled):
        Deadline(60.0, cancelled=lambda: True).check()


def test_without_a_deadline_nothing_expires_and_outside_a_block_none_applies() -> None:
    with deadline.within(Deadline(0.0)):
        assert deadline.current().remaining() == 0.0

    assert deadline.current().remaining() == float("inf")
    deadline.check()


def test_a_lambda_invocation_keeps_a_second_of_its_remaining_time_to_answer() -> None:
    class Context:
        def get_remaining_time_in_millis(self) -> int:
            return 28_000

    limit = of_context(Context())

    assert 26.5 < limit.remaining() <= 27.0
    assert of_context(None).remaining() == float("inf")


def test_a_retrieve_over_long_buffered_turns_answers_in_time_with_what_it_has(engine: Engine) -> None:
    # Given 64 long buffered turns nobody has embedded, and a model that takes 10 s a chunk
    say_long(engine, 64)
    clock = Clock()
    engine.embedder = TimedEmbedder(clock, passage_s=10.0)

    # When a retrieve runs under a 28 s deadline
    with deadline.within(Deadline(28.0, clock=clock)):
        hits = ask(engine)

    # Then it stopped embedding at half its deadline and answered with every turn (by its words)
    assert clock.now <= 28.0
    assert len(hits) == 50
    assert 0 < engine.embedder.passages < 64


def test_a_retrieve_past_its_deadline_after_the_query_is_embedded_raises(engine: Engine) -> None:
    say_long(engine, 4)
    clock = Clock()
    engine.embedder = TimedEmbedder(clock, query_s=30.0)

    with deadline.within(Deadline(28.0, clock=clock)), pytest.raises(DeadlineExceeded):
        ask(engine)

    assert engine.embedder.passages == 0


def test_a_retrieve_whose_client_has_gone_embeds_no_buffered_turn(engine: Engine) -> None:
    say_long(engine, 16)
    spy = TimedEmbedder(Clock())
    engine.embedder = spy

    with deadline.within(Deadline(28.0, cancelled=lambda: True)), pytest.raises(Cancelled):
        ask(engine)

    assert spy.passages == 0


def test_a_retrieve_embeds_at_most_its_budget_of_characters(engine: Engine) -> None:
    # Given 40 buffered turns of 2,000 characters and a budget of 16,384 characters
    say_long(engine, 40)
    engine.limits = replace(engine.limits, retrieve_embed_budget_chars=16_384)
    spy = TimedEmbedder(Clock())
    engine.embedder = spy

    # When a retrieve runs
    hits = ask(engine)

    # Then it embedded the 8 newest turns that fit, and still found every turn by its words
    assert spy.passages == 8
    assert len(hits) == 40
