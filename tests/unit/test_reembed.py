"""Changing the embedder of an existing store: `reindex --reembed` gives every memory new vectors."""

from __future__ import annotations

from collections.abc import Sequence

from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.indexing.documents import embedding_text
from memory_engine.usecases.reembed import reembed
from tests.contract.builders import EMBEDDING, TENANT, append_turns, make_memory, make_session
from tests.fakes.ports import HashEmbedder


def _close(got: Sequence[Sequence[float]], expected: Sequence[Sequence[float]]) -> bool:
    """Equal as float32 (how the store keeps vectors)."""
    return len(got) == len(expected) and all(
        len(a) == len(b) and all(abs(x - y) < 1e-6 for x, y in zip(a, b, strict=True))
        for a, b in zip(got, expected, strict=True)
    )


def _store_with_two_memories() -> SqliteStore:
    store = SqliteStore(":memory:")
    session = make_session()
    append_turns(store, session, "d1", "d2", "d3")
    store.save_memory(make_memory("d1", "d2", turn_embeddings=[EMBEDDING, EMBEDDING]))
    store.save_memory(make_memory("d3", first_seq=2))  # stored before turn vectors existed
    return store


def test_reembedding_replaces_every_vector_with_the_new_models() -> None:
    # Given memories whose vectors came from another model (4 dimensions)
    store = _store_with_two_memories()
    model = HashEmbedder(dimension=16)

    # When they are re-embedded
    count = reembed(store, model)

    # Then each memory has the new model's vector of its text, and one per turn where it had them
    memories = sorted(store.iter_memories(TENANT), key=lambda m: m.first_seq)
    assert count == 2
    for memory in memories:
        assert _close([memory.embedding], model.embed([embedding_text(memory)]))
    turns = {turn.dialog_uuid: turn for turn in store.list_turns(TENANT, "session-1")}
    assert _close(memories[0].turn_embeddings, model.embed([turns["d1"].text(), turns["d2"].text()]))
    assert memories[1].turn_embeddings == []


def test_reembedding_reports_progress_and_touches_only_the_tenant_asked() -> None:
    store = _store_with_two_memories()
    seen: list[int] = []

    assert reembed(store, HashEmbedder(), tenant="someone-else", progress=seen.append) == 0
    assert seen == [0]
    assert all(memory.embedding == EMBEDDING for memory in store.iter_memories(TENANT))


def test_the_reindex_command_reembeds_before_rebuilding_the_local_index() -> None:
    from memory_engine.composition import wiring
    from memory_engine_app import cli
    from tests.fakes.engine import fake_engine

    # Given a local engine whose store holds vectors of another model
    engine = fake_engine()
    session = make_session()
    append_turns(engine.store, session, "d1")
    engine.store.save_memory(make_memory("d1"))
    wiring.use(engine)
    try:
        # When `memory-engine reindex --reembed` runs
        status = cli.main(["reindex", "--reembed"])
    finally:
        wiring.use(None)

    # Then the stored memory and its index document carry the configured model's vector
    (memory,) = engine.store.iter_memories(TENANT)
    assert status == 0
    assert len(memory.embedding) == engine.embedder.dimension
    (hit,) = engine.index.search(TENANT, [memory.parent_session_uuid], "", memory.embedding, 1)
    assert hit.doc_id == memory.memory_id
