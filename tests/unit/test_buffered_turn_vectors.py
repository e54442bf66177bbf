"""Buffered turns are embedded once, by the worker, and kept with the turn: retrieve embeds at most
a small budget of turns that have no vector yet, however many wait for extraction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import EmbedMode
from memory_engine.usecases import consolidate, extract, retrieve
from tests.fakes.engine import ENGINE_BACKENDS
from tests.fakes.ports import FailingExtractor, HashEmbedder

TENANT, SESSION, THREAD = "acme", "s1", "t1"


class CountingEmbedder(HashEmbedder):
    """Counts the passages it embeds (queries apart)."""

    def __init__(self) -> None:
        super().__init__()
        self.passages = 0

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if mode == "passage":
            self.passages += len(texts)
        return super().embed(texts, mode)


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Engine:
    with ENGINE_BACKENDS[request.param](extraction_threshold=1000, retrieve_embed_budget=8) as built:
        built.embedder = CountingEmbedder()
        yield built


def say(engine: Engine, count: int) -> None:
    for n in range(count):
        request = {
            "session_uuid": SESSION,
            "parent_session_uuid": THREAD,
            "new_dialog": {"uuid": f"d{n:03d}", "query": f"turn {n} about the blue umbrella"},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))


def ask(engine: Engine, query: str = "umbrella") -> list[str]:
    request = RetrieveRequest(
        parent_session_uuids=[THREAD], user_input={"query": query}, options={"limit": 50}
    )
    return [hit.memory_id for hit in retrieve.run(engine, TENANT, request).data]


def embedder(engine: Engine) -> CountingEmbedder:
    assert isinstance(engine.embedder, CountingEmbedder)
    return engine.embedder


def test_a_retrieve_embeds_at_most_its_budget_of_turns_without_a_vector(engine: Engine) -> None:
    # Given 40 buffered turns nobody embedded yet (the buffer is below the extraction point)
    say(engine, 40)

    # When a retrieve runs
    hits = ask(engine)

    # Then it embedded 8 turns (the budget), not 40, and still finds the others lexically
    assert embedder(engine).passages == 8
    assert len(hits) == 40


def test_the_budget_goes_to_the_newest_turns(engine: Engine) -> None:
    say(engine, 20)

    ask(engine)
    again = embedder(engine).passages
    ask(engine)

    # The 8 newest were embedded and cached; the next retrieve embeds the 8 before them.
    assert (again, embedder(engine).passages) == (8, 16)


def test_the_worker_stores_every_buffered_turns_vector_and_retrieve_embeds_none_of_them(
    engine: Engine,
) -> None:
    # Given 40 buffered turns, and an extraction job for their session (nothing to cut yet)
    say(engine, 40)
    extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid=SESSION))
    stored = [turn.embedding for turn in engine.store.buffered_turns(TENANT, SESSION)]
    assert all(vector is not None for vector in stored)
    before = embedder(engine).passages

    # When a retrieve runs (a fresh process: nothing cached)
    engine.turn_vectors = type(engine.turn_vectors)()
    ask(engine)

    # Then it embedded no turn
    assert embedder(engine).passages == before


def test_extraction_reuses_the_stored_turn_vectors(engine: Engine) -> None:
    say(engine, 8)
    extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid=SESSION))  # stores the vectors
    before = embedder(engine).passages

    [memory] = extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid=SESSION, force=True))

    # Nine passages: the memory's own text and its 8 turns' windows; its 8 turn vectors were the
    # stored ones
    assert embedder(engine).passages == before + 1 + 8
    assert len(memory.turn_embeddings) == 8
    assert len(memory.window_embeddings) == 8


def test_a_job_that_fails_in_the_llm_still_stores_the_vectors_of_the_turns_it_leaves(engine: Engine) -> None:
    # Given 24 buffered turns (3 batches at the point) and an LLM that is down
    engine.limits = replace(engine.limits, extraction_threshold=20)
    say(engine, 24)
    engine.extractor = FailingExtractor({SESSION})

    # When the job runs and fails
    with pytest.raises(RuntimeError):
        extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid=SESSION))

    # Then every buffered turn has its vector stored: a restart's first retrieve embeds none
    assert all(turn.embedding is not None for turn in engine.store.buffered_turns(TENANT, SESSION))


def test_turns_extracted_by_the_job_get_no_extra_vector_write(engine: Engine) -> None:
    engine.limits = replace(engine.limits, extraction_threshold=20)
    say(engine, 20)

    extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid=SESSION))

    turns = engine.store.list_turns(TENANT, SESSION)
    assert [turn.embedding is not None for turn in turns] == [False] * 16 + [True] * 4


def test_a_second_retrieve_embeds_and_analyses_no_buffered_turn_again(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 6 buffered turns (under the budget) of words no other test says, so no cache has them
    from uuid import uuid4

    from memory_engine.retrieval import features

    unheard = uuid4().hex  # the analysis cache is the process's: other runs' words must not match
    analysed: list[str] = []
    tokenize = features.tokenize

    def counting(text: str) -> list[str]:
        if unheard in text:  # the buffered turns' words (not the question's)
            analysed.append(text)
        return tokenize(text)

    monkeypatch.setattr(features, "tokenize", counting)
    for n in range(6):
        request = {
            "session_uuid": SESSION,
            "parent_session_uuid": THREAD,
            "new_dialog": {"uuid": f"q{n}", "query": f"the quokka {unheard}{n} hops at dawn"},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))
    ask(engine, "quokka")
    first = (embedder(engine).passages, len(analysed))

    # When the same turns are asked about again
    ask(engine, "quokka at dawn")

    # Then the first retrieve embedded and analysed each turn once, and the second neither
    assert first == (6, 6)
    assert (embedder(engine).passages, len(analysed)) == (6, 6)
