"""A retrieve embeds only a small bounded amount of buffered text (a few short turns): a long
turn's vector is made off the request path (the local server's background step when the turn
arrives, or the worker's job), and until then the turn is found by its words (issue 42 §1)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.models.domain import Turn
from memory_engine.ports import EmbedMode
from memory_engine.usecases import arrived, consolidate, retrieve
from tests.fakes.engine import ENGINE_BACKENDS
from tests.fakes.ports import HashEmbedder

TENANT, SESSION, THREAD = "acme", "s1", "t1"
LONG = 100_000  # each message of a heavy neighbour's turn (issue 42's attack)


class CountingEmbedder(HashEmbedder):
    """Counts the passages it embeds and their characters as embedded (queries apart)."""

    def __init__(self, max_chars: int) -> None:
        super().__init__()
        self.max_chars = max_chars
        self.passages = 0
        self.chars = 0

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if mode == "passage":
            self.passages += len(texts)
            self.chars += sum(min(len(text), self.max_chars) for text in texts)
        return super().embed(texts, mode)


class Arrivals:
    """Records the turns consolidate says have arrived."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []

    def buffered(self, turn: Turn) -> None:
        self.turns.append(turn)


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param](extraction_threshold=1000) as built:
        built.embedder = CountingEmbedder(built.limits.embed_max_chars)
        yield built


def say(engine: Engine, uuid: str, query: str, answer: str | None = None) -> None:
    dialog = {"uuid": uuid, "query": query} | ({"answer": answer} if answer else {})
    request = {"session_uuid": SESSION, "parent_session_uuid": THREAD, "new_dialog": dialog}
    consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))


def say_long(engine: Engine, count: int) -> None:
    for n in range(count):
        head = f"turn {n} about the harbour wall{n} "
        say(engine, f"long{n:02d}", head + "x" * (LONG - len(head)), "y" * LONG)


def ask(engine: Engine, query: str) -> list[tuple[str, dict[str, float]]]:
    request = RetrieveRequest(
        parent_session_uuids=[THREAD], user_input={"query": query}, options={"limit": 50, "explain": True}
    )
    return [(hit.memory_id, hit.score_parts or {}) for hit in retrieve.run(engine, TENANT, request).data]


def counted(engine: Engine) -> CountingEmbedder:
    assert isinstance(engine.embedder, CountingEmbedder)
    return engine.embedder


def test_a_retrieve_beside_long_buffered_turns_embeds_none_of_them(engine: Engine) -> None:
    # Given 20 buffered turns of 2 x 100,000 characters that nothing has embedded yet
    say_long(engine, 20)

    # When a retrieve of their thread runs
    ask(engine, "harbour")

    # Then it embedded no passage at all (each would cost a capped text, past the budget)
    assert counted(engine).passages == 0


def test_a_retrieve_embeds_at_most_its_character_budget(engine: Engine) -> None:
    # Given long turns and, newer, short ones of 300 characters each
    say_long(engine, 3)
    for n in range(10):
        say(engine, f"short{n}", f"short turn {n} about the harbour " + "." * 268)

    # When a retrieve runs
    ask(engine, "harbour")

    # Then it embedded the short turns that fit its budget, passing over the long ones
    budget = engine.limits.retrieve_embed_budget_chars
    assert 0 < counted(engine).chars <= budget
    assert counted(engine).passages == budget // 300


def test_a_long_turn_without_a_vector_is_found_by_its_words(engine: Engine) -> None:
    # Given long buffered turns that nothing has embedded yet
    say_long(engine, 5)

    # When a retrieve asks for a word only the newest one says
    hits = ask(engine, "wall4")

    # Then that turn comes first, scored by its words alone (embedded, it would match by vector too)
    uuid, parts = hits[0]
    assert uuid == "long04"
    assert parts["lexical"] > 0 and parts["dense"] == 0.0


def test_a_turn_embedded_off_the_request_path_is_scored_by_its_vector_and_not_embedded_again(
    engine: Engine,
) -> None:
    # Given long turns the background step prepared when they arrived
    arrivals = Arrivals()
    engine.arrivals = arrivals
    say_long(engine, 5)
    assert arrived.prepare(engine, arrivals.turns) == 5
    before = counted(engine).passages

    # When a retrieve asks for a word only an older one says (past one retrieve's analysis budget)
    hits = ask(engine, "wall2")

    # Then it embedded nothing, and found that turn by its words and by its vector
    assert counted(engine).passages == before
    uuid, parts = hits[0]
    assert uuid == "long02"
    assert parts["lexical"] > 0 and parts["dense"] > 0


def test_warming_turns_that_already_have_a_vector_embeds_nothing(engine: Engine) -> None:
    arrivals = Arrivals()
    engine.arrivals = arrivals
    say(engine, "d1", "the lighthouse keeper counted ships")
    arrived.prepare(engine, arrivals.turns)

    assert arrived.prepare(engine, arrivals.turns) == 0
    assert counted(engine).passages == 1


def test_consolidate_tells_of_a_new_turn_and_not_of_a_replay(engine: Engine) -> None:
    # Given an engine whose arrivals are recorded
    arrivals = Arrivals()
    engine.arrivals = arrivals

    # When a turn is sent twice
    say(engine, "d1", "the lighthouse keeper counted ships")
    say(engine, "d1", "the lighthouse keeper counted ships")

    # Then arrivals heard of it once, and nothing was embedded on the request path
    assert [turn.dialog_uuid for turn in arrivals.turns] == ["d1"]
    assert counted(engine).passages == 0
