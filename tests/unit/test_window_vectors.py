"""Window vectors: each turn document also carries the vector of the turn with its neighbours in
the memory, and a turn's cosine is mixed with its window's (issue #14, docs/retrieval.md)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from memory_engine.adapters.local.index_files import PersistedIndex
from memory_engine.adapters.local.sqlite_rows import STORE_SCHEMA
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.engine import Engine
from memory_engine.indexing.documents import index_documents, turn_embedding_text, window_text
from memory_engine.models.api import ConsolidateRequest, ForkRequest, RetrieveRequest
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import EmbedMode
from memory_engine.retrieval.config import DEFAULT_WEIGHTS
from memory_engine.retrieval.features import FoundTurn, Query, turn_candidates
from memory_engine.retrieval.fusion import rank
from memory_engine.usecases import consolidate, extract, fork, retrieve
from memory_engine.usecases.reembed import reembed
from tests.contract.builders import TENANT, append_turns, make_memory, make_session
from tests.fakes.engine import local_engine
from tests.fakes.ports import HashEmbedder
from tests.unit.test_indexing import TURNS, _memory
from tests.unit.test_local_index import TENANT as INDEX_TENANT
from tests.unit.test_local_index import _axis, _doc

DENSE = {**DEFAULT_WEIGHTS, "dense": 1.0, "window": 1.0, "lexical": 0.0, "memory": 0.0, "memory_dense": 0.0}
QUERY = Query.read("what did Ana plant", datetime(2023, 5, 20))

# -- fusion ---------------------------------------------------------------------------------------


def _found(memory_id: str | None, dense: float, window: float | None) -> FoundTurn:
    return FoundTurn(f"{memory_id}:0" if memory_id else "turn:s:d9", memory_id, dense, window, 0.0, "", None)


def test_a_turns_cosine_is_mixed_with_its_windows() -> None:
    # Given two memories whose best turns are equally close to the query, one of which sits in a
    # window that is about the question (its neighbours answer it), the other in one that is not
    turns = turn_candidates([_found("m1", 0.8, 0.9), _found("m2", 0.8, 0.5)], QUERY, 0.25)

    ranked = rank([], turns, DENSE)

    # Then the window decides: 0.75 * 0.8 + 0.25 * 0.9 against 0.75 * 0.8 + 0.25 * 0.5
    assert [(unit.key, unit.score) for unit in ranked] == [("m1", 0.825), ("m2", 0.725)]


def test_a_turn_without_a_window_vector_is_scored_by_its_own_cosine() -> None:
    # Given a buffered turn (never has a window) and a memory's turn with a weaker window
    turns = turn_candidates([_found(None, 0.8, None), _found("m1", 0.8, 0.4)], QUERY, 0.25)

    ranked = rank([], turns, DENSE)

    # Then the buffered turn keeps its whole cosine; the memory's is pulled down by its window
    assert [(unit.key, unit.score) for unit in ranked] == [("turn:s:d9", 0.8), ("m1", 0.7)]


def test_the_window_share_is_its_own_score_part_and_the_parts_add_up() -> None:
    weights = {**DENSE, "dense": 0.9, "window": 0.9, "lexical": 0.1}

    [unit] = rank([], turn_candidates([_found("m1", 0.8, 0.6)], QUERY, 0.25), weights)

    assert unit.parts["dense"] == pytest.approx(0.9 * 0.75 * 0.8)
    assert unit.parts["window"] == pytest.approx(0.9 * 0.25 * 0.6)
    assert sum(unit.parts.values()) == pytest.approx(unit.score, abs=1e-6)


def test_a_window_share_of_zero_changes_nothing() -> None:
    windowed = [_found("m1", 0.7, 0.1), _found("m2", 0.6, 0.9)]
    plain = [turn._replace(window=None) for turn in windowed]

    assert rank([], turn_candidates(windowed, QUERY, 0.0), DENSE) == rank(
        [], turn_candidates(plain, QUERY, 0.0), DENSE
    )


# -- what a window is, and where its vector goes ----------------------------------------------------


def test_a_window_is_the_turn_with_its_neighbours_in_the_batch() -> None:
    lines = [turn_embedding_text(turn) for turn in TURNS]

    assert window_text(TURNS, 0) == "\n".join(lines[:2])  # the first turn has no turn before it
    assert window_text(TURNS, 1) == "\n".join(lines[:2])  # nor the last one after it
    assert window_text(TURNS[:1], 0) == lines[0]


def test_a_turn_document_carries_its_window_vector() -> None:
    memory = _memory([[0.0, 1.0], [0.6, 0.8]]).model_copy(
        update={"window_embeddings": [[1.0, 0.0], [0.8, 0.6]]}
    )

    memory_doc, *turn_docs = index_documents(memory, TURNS)

    assert memory_doc.window_vector is None
    assert [doc.window_vector for doc in turn_docs] == [[1.0, 0.0], [0.8, 0.6]]
    # A memory stored before window vectors has turn documents without them
    assert [doc.window_vector for doc in index_documents(_memory([]), TURNS)[1:]] == [None, None]


class RecordingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.passages: list[str] = []

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        if mode == "passage":
            self.passages.extend(texts)
        return super().embed(texts, mode)


def _say(engine: Engine, lines: Sequence[str]) -> None:
    for n, line in enumerate(lines):
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "thread",
            "new_dialog": {"uuid": f"d{n}", "query": line},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))


LINES = ["Where did you go hiking?", "Up the ridge trail", "Was it cold?", "Freezing at the top"]


@pytest.mark.parametrize("share", [0.25, 0.0])
def test_extraction_embeds_each_turns_window_when_the_ranking_uses_it(share: float) -> None:
    with local_engine(extraction_threshold=1000) as engine:
        engine.embedder = embedder = RecordingEmbedder()
        engine.retrieval = replace(engine.retrieval, window_share=share)
        _say(engine, LINES)
        extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid="s1"))  # the turns' own vectors
        embedder.passages.clear()

        [memory] = extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid="s1", force=True))

        turns = engine.store.list_turns(TENANT, "s1")
        if not share:  # the memory's own text only: nothing would read a window
            assert len(embedder.passages) == 1 and memory.window_embeddings == []
            return
        windows = [window_text(turns, at) for at in range(4)]
        assert embedder.passages[1:] == windows
        np.testing.assert_allclose(memory.window_embeddings, HashEmbedder().embed(windows), atol=1e-6)
        # and retrieve sees the window's cosine of a turn it finds
        request = RetrieveRequest(
            parent_session_uuids=["thread"],
            user_input={"query": "cold at the top"},
            options={"explain": True},
        )
        [hit] = retrieve.run(engine, TENANT, request).data
        assert hit.score_parts is not None and hit.score_parts["window"] > 0


# -- kept across stores, re-embeds, restarts ----------------------------------------------------------


def test_reembedding_gives_window_vectors_cut_as_extraction_cuts_them() -> None:
    store = SqliteStore(":memory:")
    append_turns(store, make_session(), "d1", "d2", "d3")
    old = [[1.0, 0.0, 0.0, 0.0]] * 3
    # (one written before window vectors: turn vectors only)
    store.save_memory(make_memory("d1", "d2", "d3", turn_embeddings=old))
    model = HashEmbedder(dimension=16)

    reembed(store, model)

    [memory] = store.iter_memories(TENANT)
    turns = store.list_turns(TENANT, "session-1")
    expected = model.embed([window_text(turns, at) for at in range(3)])
    np.testing.assert_allclose(memory.window_embeddings, expected, atol=1e-6)
    assert len(memory.turn_embeddings) == 3


def test_a_store_file_from_before_window_vectors_is_migrated_and_reads_none(tmp_path: Path) -> None:
    # Given a database whose memories table predates the window_embeddings column, with a memory
    path = tmp_path / "old.sqlite3"
    old_schema = STORE_SCHEMA.replace("    window_embeddings BLOB NOT NULL DEFAULT x'',\n", "")
    assert old_schema != STORE_SCHEMA
    with sqlite3.connect(path) as conn:
        conn.executescript(old_schema)
        conn.execute(
            "INSERT INTO memories (tenant, memory_id, session_uuid, parent_session_uuid, fields,"
            " source_dialog_uuids, first_seq, last_seq, embedding, source_text, created_at, metadata)"
            " VALUES ('acme', 'm1', 's1', 't1', '{\"summary\": \"x\"}', '[\"d1\"]', 0, 0, x'', '', "
            "'2026-01-01T00:00:00+00:00', '{}')"
        )

    # When the store opens it
    [memory] = SqliteStore(path).iter_memories()

    # Then the memory reads back without window vectors
    assert memory.window_embeddings == []


def test_window_vectors_come_back_when_a_closed_index_is_loaded(tmp_path: Path) -> None:
    # Given a graph shard of turn documents, one with a window vector and one without, closed
    index = PersistedIndex(tmp_path, ann_threshold=2)
    turn = _doc("m:0", "canoe", _axis(1)).model_copy(update={"kind": "turn", "memory_id": "m"})
    bare = _doc("m:1", "paddle", _axis(3)).model_copy(update={"kind": "turn", "memory_id": "m"})
    index.upsert([turn.model_copy(update={"window_vector": _axis(2)}), bare])
    index.close()

    # When it is loaded again
    loaded = PersistedIndex.load(tmp_path, ann_threshold=2)

    # Then the window is there, and the turn without one still has none
    hits = {
        hit.doc_id: hit
        for hit in loaded.search(INDEX_TENANT, ["t1"], "canoe paddle", _axis(2), k=5, kind="turn")
    }
    assert hits["m:0"].window == pytest.approx(1.0, abs=2e-3)
    assert hits["m:1"].window is None


def test_a_fork_copies_a_memorys_window_vectors_and_its_copy_is_searched_with_them() -> None:
    with local_engine(extraction_threshold=1000) as engine:
        _say(engine, LINES)
        [memory] = extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid="s1", force=True))
        assert len(memory.window_embeddings) == 4

        fork.run(
            engine,
            TENANT,
            ForkRequest(source_session_uuid="s1", target_session_uuid="s2", cutoff_dialog_uuid="d3"),
        )

        [copy] = engine.store.list_memories(TENANT, "s2")
        stored = engine.store.get_memory(TENANT, memory.memory_id)
        assert stored is not None and copy.window_embeddings == stored.window_embeddings
        hits = engine.index.search(TENANT, ["s2"], "cold", memory.turn_embeddings[2], k=5, kind="turn")
        assert hits and all(hit.window is not None for hit in hits)
