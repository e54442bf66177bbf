"""The local server's background step: a turn consolidate buffers is embedded and its words
analysed off the request path, by one bounded list and one thread (`memory_engine_app.turn_embedder`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from memory_engine.engine import Engine
from memory_engine.indexing.documents import turn_lexical_text
from memory_engine.models.api import ConsolidateRequest
from memory_engine.ports import EmbedMode
from memory_engine.usecases import consolidate, turn_terms
from memory_engine.usecases.turn_vectors import cache_key
from memory_engine_app import local_engine
from memory_engine_app.turn_embedder import TurnEmbedder
from tests.fakes.engine import fake_engine
from tests.fakes.ports import HashEmbedder


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.passages: list[str] = []

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if mode == "passage":
            self.passages.extend(texts)
        return super().embed(texts, mode)


class BrokenEmbedder(HashEmbedder):
    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        raise RuntimeError("the model is gone")


def say(
    engine: Engine, uuid: str, text: str = "the lighthouse keeper counted ships", tenant: str = "acme"
) -> None:
    dialog = {"uuid": uuid, "query": f"{uuid}: {text}"}
    request = {"session_uuid": "s1", "parent_session_uuid": "t1", "new_dialog": dialog}
    consolidate.run(engine, tenant, ConsolidateRequest.model_validate(request))


class Steps(CountingEmbedder):
    """Records the passages of each embed call apart: one call per step of the list."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[list[str]] = []

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if mode == "passage":
            self.steps.append([text.split(":", 2)[1].strip() for text in texts])
        return super().embed(texts, mode)


@pytest.fixture
def engine() -> Engine:
    built = fake_engine(extraction_threshold=1000)
    built.embedder = CountingEmbedder()
    return built


def counted(engine: Engine) -> CountingEmbedder:
    assert isinstance(engine.embedder, CountingEmbedder)
    return engine.embedder


def test_an_arriving_turn_is_only_listed_on_the_request_path(engine: Engine) -> None:
    # Given the background step told of arrivals
    embedder = TurnEmbedder(engine)
    engine.arrivals = embedder

    # When a turn is consolidated
    say(engine, "d1")

    # Then it waits on the list and nothing was embedded yet
    assert embedder.waiting() == 1
    assert counted(engine).passages == []


def test_the_step_embeds_and_analyses_each_waiting_turn_into_the_process_caches(engine: Engine) -> None:
    # Given two arrived turns
    embedder = TurnEmbedder(engine)
    engine.arrivals = embedder
    say(engine, "d1")
    say(engine, "d2")

    # When the step runs
    done = embedder.drain()

    # Then both are embedded once, their vectors and words kept for the retrieves
    assert done == 2 and embedder.waiting() == 0
    turns = engine.store.buffered_turns("acme", "s1")
    assert all(engine.turn_vectors.get(cache_key(turn)) is not None for turn in turns)
    texts = [turn_lexical_text(turn, engine.retrieval) for turn in turns]
    assert all(engine.turn_terms.get(turn_terms.digest(text)) is not None for text in texts)
    assert len(counted(engine).passages) == 2


def test_past_its_capacity_the_oldest_waiting_turn_is_left_to_the_worker(engine: Engine) -> None:
    # Given a list of two places
    embedder = TurnEmbedder(engine, capacity=2)
    engine.arrivals = embedder

    # When three turns arrive before the step runs
    for uuid in ("d1", "d2", "d3"):
        say(engine, uuid)
    embedder.drain()

    # Then the two newest were embedded, and the list held no more than two
    passages = counted(engine).passages
    assert len(passages) == 2 and "d2:" in passages[0] and "d3:" in passages[1]


def test_a_step_takes_the_waiting_tenants_turns_in_turn(engine: Engine) -> None:
    # Given one tenant's ten turns waiting ahead of another tenant's two
    engine.embedder = steps = Steps()
    embedder = TurnEmbedder(engine)
    engine.arrivals = embedder
    for n in range(10):
        say(engine, f"heavy{n}", tenant="heavy")
    say(engine, "light0", tenant="light")
    say(engine, "light1", tenant="light")

    # When the step runs
    embedder.drain()

    # Then its first call takes the two tenants' turns by turns, the light tenant's two in it,
    # and the heavy tenant's rest come after, oldest first
    assert steps.steps[0] == ["heavy0", "light0", "heavy1", "light1", "heavy2", "heavy3", "heavy4", "heavy5"]
    assert steps.steps[1:] == [["heavy6", "heavy7", "heavy8", "heavy9"]]


def test_past_its_capacity_the_tenant_with_most_waiting_loses_its_oldest_turn(engine: Engine) -> None:
    # Given a list of four places holding a light tenant's turn and a heavy tenant's three
    engine.embedder = steps = Steps()
    embedder = TurnEmbedder(engine, capacity=4)
    engine.arrivals = embedder
    say(engine, "light0", tenant="light")
    for n in range(3):
        say(engine, f"heavy{n}", tenant="heavy")

    # When the heavy tenant sends two more, and the light tenant one more
    say(engine, "heavy3", tenant="heavy")
    say(engine, "heavy4", tenant="heavy")
    say(engine, "light1", tenant="light")
    embedder.drain()

    # Then the heavy tenant lost its oldest turns, never the light tenant's
    assert steps.steps == [["light0", "heavy3", "light1", "heavy4"]]


def test_a_failing_model_costs_the_step_its_turns_and_nothing_else(engine: Engine) -> None:
    # Given a model that fails
    engine.embedder = BrokenEmbedder()
    embedder = TurnEmbedder(engine)
    engine.arrivals = embedder

    # When a turn arrives and the step runs
    say(engine, "d1")
    done = embedder.drain()

    # Then the turn stays buffered (its vector left to the worker's job) and the step goes on
    assert done == 0 and embedder.waiting() == 0
    assert [turn.dialog_uuid for turn in engine.store.buffered_turns("acme", "s1")] == ["d1"]


def test_the_started_step_embeds_an_arriving_turn_in_its_thread_and_stops(engine: Engine) -> None:
    # Given a started step whose model signals each call
    called = threading.Event()
    inner = counted(engine)

    class Signalling(CountingEmbedder):
        def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
            vectors = inner.embed(texts, mode)
            called.set()
            return vectors

    engine.embedder = Signalling()
    embedder = TurnEmbedder(engine)
    engine.arrivals = embedder
    embedder.start()
    try:
        # When a turn arrives
        say(engine, "d1")

        # Then the step's thread embeds it
        assert called.wait(60)
    finally:
        # And it stops when asked
        assert embedder.stop(60)
    assert len(inner.passages) == 1


def test_the_local_server_tells_its_handlers_engine_of_arrivals(engine: Engine) -> None:
    # Given the server's engine and the worker's
    working = local_engine.worker_engine(engine)

    # When the background step is made
    embedder = local_engine.turn_embedder(engine, working)

    # Then consolidate on the handlers' engine tells it, and it shares the caches retrieves read
    assert engine.arrivals is embedder
    assert (working.turn_vectors, working.turn_terms) == (engine.turn_vectors, engine.turn_terms)


def test_the_count_of_waiting_turns_follows_arrivals_drops_and_steps(engine: Engine) -> None:
    # Given a list of five places and three tenants sending eight turns between them
    embedder = TurnEmbedder(engine, capacity=5)
    engine.arrivals = embedder
    for n, tenant in enumerate(["a", "b", "a", "c", "a", "a", "b", "a"]):
        say(engine, f"{tenant}{n}", tenant=tenant)
        # Then it counts what waits: one more per turn until full, then full
        assert embedder.waiting() == min(n + 1, 5)

    # When a step takes them / Then none waits
    embedder.drain()
    assert embedder.waiting() == 0
