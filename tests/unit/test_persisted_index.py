"""The local index on disk: loaded at start, checked against the store, rebuilt when damaged;
and per-thread shards that keep a small thread's hits under crowding."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_engine import wiring
from memory_engine.adapters.local.index_files import IndexFileError, PersistedIndex
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.backends import database_path
from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, DeleteRequest, ForkRequest
from memory_engine.settings import Settings, reset_settings
from memory_engine.usecases import consolidate, delete, fork
from memory_engine_app import local_index
from tests.fakes.engine import run_worker
from tests.fakes.ports import EchoExtractor, HashEmbedder, ListQueue, StepClock
from tests.unit.test_local_index import _axis, _doc

TENANT = "acme"


# -- crowding -------------------------------------------------------------------------------


def test_a_small_thread_keeps_its_hits_among_many_big_threads() -> None:
    # Given 30 threads of 60 documents each, all near one direction and all using the query word
    # (graphs from 40 documents on), and a small thread of 3 documents pointing elsewhere
    index = LocalSearchIndex(ann_threshold=40)
    crowd = [
        _doc(f"t{t}-d{i}", "kayak kayak river", _axis(0, 16), thread=f"t{t}")
        for t in range(30)
        for i in range(60)
    ]
    index.upsert(crowd)
    index.upsert([_doc(f"small-{i}", "kayak trip", _axis(1 + i, 16), thread="small") for i in range(3)])

    # When the small thread is searched with the crowd's direction and word
    hits = index.search(TENANT, ["small"], "kayak", _axis(0, 16), k=10)

    # Then every one of its documents comes back, and nothing of the crowd
    assert {hit.doc_id for hit in hits} == {"small-0", "small-1", "small-2"}
    assert all(hit.lexical > 0 for hit in hits)


def test_a_thread_past_the_threshold_is_searched_in_a_graph_with_the_same_answers() -> None:
    import numpy as np

    # Given the same 300 documents (distinct random directions) in an exact index and in one
    # whose shards become graphs at 50 documents
    rows = np.random.default_rng(3).standard_normal((300, 16))
    docs = [_doc(f"d{i}", f"word{i % 7} common", row.tolist()) for i, row in enumerate(rows)]
    exact, graph = LocalSearchIndex(ann_threshold=None), LocalSearchIndex(ann_threshold=50)
    exact.upsert(docs)
    graph.upsert(docs)

    # When both search near one document's direction
    query = (rows[42] + 0.3 * rows[7]).tolist()

    def top(index: LocalSearchIndex) -> list[tuple[str, float]]:
        return [(h.doc_id, round(h.dense, 4)) for h in index.search(TENANT, ["t1"], "", query, k=5)]

    # Then the graph finds the same documents, in the same order, with the same scores
    assert type(graph.tenants[TENANT].shards["memory", "t1"].vectors).__name__ == "GraphVectors"
    assert top(graph) == top(exact)


# -- the files --------------------------------------------------------------------------------


def _reopen(directory: Path) -> PersistedIndex:
    return PersistedIndex.load(directory, ann_threshold=2)


def _seeded(directory: Path) -> PersistedIndex:
    index = PersistedIndex(directory, ann_threshold=2)
    index.upsert([_doc("a", "kayak", _axis(0)), _doc("b", "tent", _axis(1)), _doc("c", "rope", _axis(2))])
    return index


def _ids(
    index: LocalSearchIndex, text: str = "kayak tent rope", vector: list[float] | None = None
) -> set[str]:
    return {hit.doc_id for hit in index.search(TENANT, ["t1"], text, vector or _axis(0), k=5)}


def test_a_closed_index_loads_with_what_it_held(tmp_path: Path) -> None:
    index = _seeded(tmp_path)
    index.close()

    loaded = _reopen(tmp_path)

    assert _ids(loaded) == {"a", "b", "c"}
    assert loaded.get(TENANT, "b") == index.get(TENANT, "b")


def test_a_loaded_shard_builds_a_documents_metadata_only_when_it_is_read(tmp_path: Path) -> None:
    # Given a closed index, loaded again
    index = _seeded(tmp_path)
    index.close()
    loaded = _reopen(tmp_path)
    shard = loaded.tenants[TENANT].shards["memory", "t1"]
    assert all(isinstance(value, int) for value in shard.meta.values())  # positions in the columns

    # When one document is read
    doc = loaded.get(TENANT, "b")

    # Then it is the document written, and only its metadata was built
    assert doc == index.get(TENANT, "b")
    assert [doc_id for doc_id, value in shard.meta.items() if isinstance(value, tuple)] == ["b"]


def test_a_checkpoint_after_a_start_copies_unread_documents_through_as_columns(tmp_path: Path) -> None:
    # Given a loaded index where one document was read, one deleted and one added
    index = _seeded(tmp_path)
    index.close()
    loaded = _reopen(tmp_path)
    loaded.get(TENANT, "c")
    loaded.delete(TENANT, ["a"])
    loaded.upsert([_doc("d", "canoe", _axis(3))])

    # When it is checkpointed and loaded again
    loaded.close()
    again = _reopen(tmp_path)

    # Then the unread document was never built as a tuple, and every document is as written
    meta = loaded.tenants[TENANT].shards["memory", "t1"].meta
    assert isinstance(meta["b"], int) and isinstance(meta["c"], tuple)
    for doc_id in "bcd":
        assert again.get(TENANT, doc_id) == loaded.get(TENANT, doc_id)
    assert again.get(TENANT, "a") is None


def test_an_index_with_deletions_and_replacements_loads_as_it_was(tmp_path: Path) -> None:
    # Given a graph shard with a deleted document (its label kept, marked deleted), a replaced
    # one and a freed BM25 slot
    index = _seeded(tmp_path)
    index.delete(TENANT, ["a"])
    index.upsert([_doc("b", "canoe", _axis(3))])
    index.close()

    # When it is loaded, and the deleted document comes back
    loaded = _reopen(tmp_path)
    assert _ids(loaded, "kayak canoe rope", _axis(0)) == {"b", "c"}
    loaded.upsert([_doc("a", "kayak", _axis(0))])

    # Then every search answers as one over the same documents never saved would
    fresh = LocalSearchIndex(ann_threshold=2)
    fresh.upsert([_doc("b", "canoe", _axis(3)), _doc("c", "rope", _axis(2)), _doc("a", "kayak", _axis(0))])
    for text, axis in [("kayak", 0), ("canoe", 3), ("rope", 2), ("", 1)]:
        assert _ids(loaded, text, _axis(axis)) == _ids(fresh, text, _axis(axis))
    assert loaded.get(TENANT, "b") == fresh.get(TENANT, "b")


def test_writes_after_the_last_checkpoint_come_back_from_the_journal(tmp_path: Path) -> None:
    # Given a checkpointed index, then an upsert and a delete that are only journaled (no close:
    # the process died)
    index = _seeded(tmp_path)
    index.checkpoint()
    index.upsert([_doc("d", "kayak canoe", _axis(3))])
    index.delete(TENANT, ["a"])

    # When it is loaded again
    loaded = _reopen(tmp_path)

    # Then both writes are there
    assert {doc_id for doc_id in "abcd" if loaded.get(TENANT, doc_id)} == {"b", "c", "d"}


def test_a_torn_journal_tail_is_dropped_and_the_rest_kept(tmp_path: Path) -> None:
    index = _seeded(tmp_path)
    index.checkpoint()
    index.upsert([_doc("d", "canoe", _axis(3))])
    index.upsert([_doc("e", "paddle", _axis(4))])
    journal = next(tmp_path.glob("journal-*.log"))
    journal.write_bytes(journal.read_bytes()[:-7])  # the last record half written

    loaded = _reopen(tmp_path)

    assert loaded.get(TENANT, "d") is not None
    assert loaded.get(TENANT, "e") is None


def test_a_write_does_not_rewrite_the_snapshot(tmp_path: Path) -> None:
    index = _seeded(tmp_path)
    index.checkpoint()
    snapshot = {path.name: path.stat().st_mtime_ns for path in tmp_path.glob("shard-*")}

    index.upsert([_doc("d", "canoe", _axis(3))])

    assert {path.name: path.stat().st_mtime_ns for path in tmp_path.glob("shard-*")} == snapshot
    assert next(tmp_path.glob("journal-*.log")).stat().st_size > 0


@pytest.mark.parametrize(
    "damage",
    [
        "manifest deleted", "shard truncated", "shard flipped", "shard deleted", "graph truncated",
        "graph flipped", "graph deleted", "older format", "folder deleted",
    ],
)  # fmt: skip
def test_a_missing_or_damaged_index_is_refused(tmp_path: Path, damage: str) -> None:
    import json

    _seeded(tmp_path).close()  # 3 documents past the threshold of 2: a graph shard
    target, _, how = damage.partition(" ")
    path = next(tmp_path.glob("shard-*.arrays" if target == "shard" else "shard-*.hnsw"))
    if damage == "manifest deleted":
        (tmp_path / "manifest.json").unlink()
    elif damage == "older format":  # a folder format 1 wrote: pickled shards
        manifest = json.loads((tmp_path / "manifest.json").read_text())
        (tmp_path / "manifest.json").write_text(json.dumps(manifest | {"format": 1}))
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    elif how == "flipped":  # same size: only the checksum tells
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "deleted" and target != "folder":
        path.unlink()
    else:
        for path in tmp_path.iterdir():
            path.unlink()

    with pytest.raises(IndexFileError):
        _reopen(tmp_path)


# -- start-up against the store (wiring) ------------------------------------------------------


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, local_index_ann_threshold=4)


def _engine(settings: Settings) -> Engine:
    store = SqliteStore(database_path(settings))
    return Engine(
        settings=settings,
        store=store,
        queue=ListQueue(),
        index=local_index.build_index(settings, store),
        embedder=HashEmbedder(),
        extractor=EchoExtractor(),
        clock=StepClock(),
    )


def _say(engine: Engine, n: int, session: str = "s1") -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": f"d{n}", "query": f"kayak turn number {n}", "answer": "ok"},
        }
    )
    consolidate.run(engine, TENANT, request)


@pytest.fixture
def engine(settings: Settings) -> Iterator[Engine]:
    engine = _engine(settings)
    for n in range(1, 21):
        _say(engine, n)
    run_worker(engine)  # two memories of 8 turns, each with its 8 turn documents
    yield engine
    engine.store.close()  # type: ignore[attr-defined]


def _held(engine: Engine) -> set[str]:
    return engine.index.memory_ids().get(TENANT, set())  # type: ignore[attr-defined]


def _stored(engine: Engine) -> set[str]:
    return {memory.memory_id for memory in engine.store.iter_memories(TENANT)}


def _restart(engine: Engine, settings: Settings) -> Engine:
    engine.store.close()  # type: ignore[attr-defined]
    return _engine(settings)


def test_the_engine_is_wired_with_the_persisted_index_beside_the_database(
    engine: Engine, settings: Settings
) -> None:
    assert isinstance(engine.index, PersistedIndex)
    assert engine.index.directory == Path(database_path(settings) + ".index")
    assert len(_stored(engine)) == 2 and _held(engine) == _stored(engine)


@pytest.mark.parametrize("damage", ["deleted", "truncated"])
def test_a_restart_with_a_deleted_or_truncated_index_rebuilds_it_losing_nothing(
    engine: Engine, settings: Settings, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Given an index with both memories and their turns, then damaged while the engine is down
    docs_before = len(engine.index)  # type: ignore[arg-type]
    engine.index.close()  # type: ignore[attr-defined]
    folder = local_index.local_index_path(settings)
    for path in folder.glob("shard-*"):
        path.unlink() if damage == "deleted" else path.write_bytes(path.read_bytes()[:10])

    # When the engine starts again
    restarted = _restart(engine, settings)

    # Then the damage was noticed, the index rebuilt from the store, and it is whole and on disk
    assert "rebuilding it from the store" in caplog.text
    assert _held(restarted) == _stored(restarted)
    assert len(restarted.index) == docs_before  # type: ignore[arg-type]
    assert len(PersistedIndex.load(folder)) == docs_before


def test_a_restart_with_a_stale_index_catches_up_with_the_store(engine: Engine, settings: Settings) -> None:
    # Given a snapshot of the index, then a third memory and a deleted memory the index never saw
    # (an old copy of the index folder, or a crash before the journal write)
    engine.index.close()  # type: ignore[attr-defined]
    folder = local_index.local_index_path(settings)
    saved = {path.name: path.read_bytes() for path in folder.iterdir()}
    for n in range(21, 29):
        _say(engine, n)
    run_worker(engine)
    gone = sorted(_stored(engine))[0]
    engine.store.delete_memory(TENANT, gone)
    for path in folder.iterdir():
        path.unlink()
    for name, data in saved.items():
        (folder / name).write_bytes(data)

    # When the engine starts again
    restarted = _restart(engine, settings)

    # Then the index holds exactly the store's memories, turn documents included
    assert _held(restarted) == _stored(restarted)
    assert gone not in _held(restarted)
    turns = restarted.index.search(TENANT, ["thread-1"], "kayak", [], k=50, kind="turn")
    assert {hit.memory_id for hit in turns} == _stored(restarted)


def test_a_delete_reaches_the_index_on_disk(engine: Engine, settings: Settings) -> None:
    # Given a dialog extracted into a memory
    memory = next(m for m in engine.store.iter_memories(TENANT) if "d3" in m.source_dialog_uuids)

    # When it is deleted, and the process dies without a checkpoint
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid="d3"))
    loaded = PersistedIndex.load(local_index.local_index_path(settings))

    # Then the index on disk has neither the memory nor its turn documents
    assert memory.memory_id not in loaded.memory_ids().get(TENANT, set())
    assert not any(doc_id.startswith(memory.memory_id) for doc_id in loaded.tenants[TENANT].where)


def test_a_fork_reaches_the_index_on_disk(engine: Engine, settings: Settings) -> None:
    # When the session is forked after its first memory, and the process dies without a checkpoint
    fork.run(
        engine,
        TENANT,
        ForkRequest(source_session_uuid="s1", target_session_uuid="s2", cutoff_dialog_uuid="d8"),
    )
    loaded = PersistedIndex.load(local_index.local_index_path(settings))

    # Then the copied memory is searchable in the target's thread from the files alone
    hits = loaded.search(TENANT, ["s2"], "kayak", [], k=10)
    copies = {memory.memory_id for memory in engine.store.list_memories(TENANT, "s2")}
    assert copies and {hit.doc_id for hit in hits} == copies


def test_reindex_rebuilds_the_local_index_from_scratch(
    engine: Engine, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_engine_app import cli

    # Given an index folder with a document the store never had
    some = engine.index.get(TENANT, sorted(_stored(engine))[0])  # type: ignore[attr-defined]
    engine.index.upsert([some.model_copy(update={"doc_id": "stray"})])
    engine.index.close()  # type: ignore[attr-defined]
    monkeypatch.setenv("MEMORY_ENGINE_DATA_DIR", str(settings.data_dir))
    reset_settings()
    wiring.reset()

    # When reindex runs
    assert cli.main(["reindex"]) == 0

    # Then the files hold the store's memories only
    loaded = PersistedIndex.load(local_index.local_index_path(settings))
    reset_settings()
    assert loaded.memory_ids() == {TENANT: _stored(engine)}


def test_a_start_leaves_what_it_loaded_out_of_the_cyclic_collectors_sight(settings: Settings) -> None:
    # Given a process whose collector tracks every object
    import gc

    gc.unfreeze()
    try:
        # When the local index is opened beside the SQLite store, as a start does
        engine = _engine(settings)

        # Then what was loaded is frozen, so full collections no longer walk the index
        assert gc.get_freeze_count() > 0
        engine.store.close()  # type: ignore[attr-defined]
    finally:
        gc.unfreeze()
