"""Switching a live local deployment to an embedder of another dimension (e5's 384 to
EmbeddingGemma's 768): `memory-engine reindex --reembed` rewrites every stored vector, memories
and buffered turns alike, and loses nothing; until it runs, a buffered turn's old vector is
never scored against a query of the new length."""

from __future__ import annotations

from dataclasses import replace

from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.usecases import consolidate, retrieve, turn_vectors
from memory_engine_app import cli
from tests.fakes.engine import fake_engine, run_worker
from tests.fakes.ports import HashEmbedder

TENANT = "acme"
FACTS = [
    f"fact number {n}: the {word} is kept in box {n}" for n, word in enumerate("abcdefghijklmnopqrstuvwx")
]


def _thread(engine: Engine) -> None:
    # Session s1's 20 turns extracted into memories; s2's 4 turns buffered, with the vectors the
    # worker stores for buffered turns
    for n, fact in enumerate(FACTS):
        request = ConsolidateRequest.model_validate(
            {
                "session_uuid": "s1" if n < 20 else "s2",
                "parent_session_uuid": "thread-1",
                "new_dialog": {"uuid": f"d{n}", "query": fact, "answer": ""},
            }
        )
        consolidate.run(engine, TENANT, request)
        if n == 19:
            run_worker(engine)
    turn_vectors.store(engine, turn_vectors.embedded(engine, engine.store.buffered_turns(TENANT, "s2")))


def _found(engine: Engine, query: str) -> str:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": query}, "options": {"limit": 3}}
    )
    return " ".join(hit.content for hit in retrieve.run(engine, TENANT, request).data)


def test_reembed_moves_every_vector_to_the_new_dimension_and_loses_nothing() -> None:
    # Given a thread with memories and buffered turns, embedded by a 64-dimensional model
    old = fake_engine()
    _thread(old)
    memories = list(old.store.iter_memories(TENANT))
    buffered = old.store.buffered_turns(TENANT, "s2")
    assert memories and buffered, "the thread holds both memories and buffered turns"
    assert {len(turn.embedding or []) for turn in buffered} == {64}
    turns_before = len(old.store.list_turns(TENANT, "s1")) + len(buffered)

    # When the deployment switches to a 16-dimensional model and runs `reindex --reembed`
    new = replace(old, embedder=HashEmbedder(dimension=16))
    wiring.use(new)
    try:
        status = cli.main(["reindex", "--reembed"])
    finally:
        wiring.use(None)

    # Then every memory and every buffered turn has a vector of the new length, none is lost
    assert status == 0
    after = list(new.store.iter_memories(TENANT))
    assert sorted(m.memory_id for m in after) == sorted(m.memory_id for m in memories)
    assert {len(m.embedding) for m in after} == {16}
    still = new.store.buffered_turns(TENANT, "s2")
    assert [t.dialog_uuid for t in still] == [t.dialog_uuid for t in buffered]
    assert {len(turn.embedding or []) for turn in still} == {16}
    assert len(new.store.list_turns(TENANT, "s1")) + len(still) == turns_before
    # and both an extracted fact and a buffered one are found with the new model
    assert "box 0" in _found(new, "where is the a kept?")
    last = int(buffered[-1].dialog_uuid.removeprefix("d"))
    assert f"box {last}" in _found(new, f"where is the {'abcdefghijklmnopqrstuvwx'[last]} kept?")


def test_a_stored_turn_vector_of_another_length_is_not_scored() -> None:
    # Given a buffered turn whose stored vector came from the old 64-dimensional model
    old = fake_engine()
    _thread(old)
    (turn, *_) = old.store.buffered_turns(TENANT, "s2")
    new = replace(
        old,
        embedder=HashEmbedder(dimension=16),
        limits=replace(old.limits, retrieve_embed_budget=0),
    )

    # When retrieve asks for vectors to score with a 16-dimensional query (no budget to embed)
    vectors = turn_vectors.for_query(new, {"t": turn}, budget=0, dimension=16)

    # Then the old vector is not used: the turn has none yet (scored by its words)
    assert vectors == {}
    # while a vector of the query's length is used as it is
    assert turn_vectors.for_query(old, {"t": turn}, budget=0, dimension=64) == {"t": turn.embedding}
