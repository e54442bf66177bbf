"""The local index on disk: loaded at start, checked against the store, rebuilt when damaged;
and per-thread shards that keep a small thread's hits under crowding."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_engine.adapters.local.index_files import IndexFileError, PersistedIndex
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.composition import wiring
from memory_engine.composition.backends import database_path
from memory_engine.engine import Engine
from memory_engine.limits import Limits
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
        return [(h.doc_id, h.dense) for h in index.search(TENANT, ["t1"], "", query, k=5)]

    # Then the graph finds the same documents, in the same order, with the same scores up to the
    # graph's float16 storage (a cosine off by ~1e-4)
    assert type(graph.shards[TENANT, "memory", "t1"].vectors).__name__ == "GraphVectors"
    found, expected = top(graph), top(exact)
    assert [doc_id for doc_id, _ in found] == [doc_id for doc_id, _ in expected]
    assert [score for _, score in found] == pytest.approx([score for _, score in expected], abs=1e-3)


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


def test_a_loaded_exact_shard_maps_its_rows_from_the_file_until_written(tmp_path: Path) -> None:
    import numpy as np

    # Given a closed index of exact shards
    index = PersistedIndex(tmp_path, ann_threshold=None)
    index.upsert([_doc("a", "kayak", _axis(0)), _doc("b", "tent", _axis(1))])
    index.close()

    # When it is loaded
    loaded = PersistedIndex.load(tmp_path, ann_threshold=None)
    vectors = loaded.shards[TENANT, "memory", "t1"].vectors

    # Then its rows are the file's pages (read as searched), and a write leaves the file as it was
    assert isinstance(vectors.matrix, np.memmap)  # type: ignore[attr-defined]
    saved = next(tmp_path.glob("shard-*.rows.npy")).read_bytes()
    loaded.upsert([_doc("a", "kayak", _axis(2))])
    assert next(tmp_path.glob("shard-*.rows.npy")).read_bytes() == saved
    assert _ids(loaded, "", _axis(2)) == {"a", "b"}


def test_documents_added_after_the_last_checkpoint_are_dropped_at_load(tmp_path: Path) -> None:
    # Given a checkpointed index, then an upsert whose words tantivy committed but whose vectors
    # were never saved (the process died: its writers released, no close)
    index = _seeded(tmp_path)
    index.checkpoint()
    index.upsert([_doc("d", "kayak canoe", _axis(3))])
    index.lexical.close()

    # When it is loaded again
    loaded = _reopen(tmp_path)

    # Then it is the checkpoint's index, words and vectors alike (the store's catch-up adds "d")
    assert _ids(loaded, "kayak canoe", _axis(3)) == {"a", "b", "c"}
    assert loaded.get(TENANT, "d") is None


@pytest.mark.parametrize("write", ["replace", "delete"])
def test_an_index_with_deletes_after_its_last_checkpoint_is_refused(tmp_path: Path, write: str) -> None:
    # Given a checkpointed index, then a document replaced or deleted, and the process dying
    index = _seeded(tmp_path)
    index.checkpoint()
    if write == "replace":
        index.upsert([_doc("a", "canoe", _axis(3))])
    else:
        index.delete(TENANT, ["a"])
    index.lexical.close()

    # When it is loaded again
    # Then it is refused: dropping the later words cannot bring the deleted ones back
    with pytest.raises(IndexFileError, match="after its last checkpoint"):
        _reopen(tmp_path)


def test_a_write_commits_its_words_and_leaves_the_vector_files_to_the_checkpoint(tmp_path: Path) -> None:
    # Given a checkpointed index
    index = _seeded(tmp_path)
    index.checkpoint()
    snapshot = {path.name: path.stat().st_mtime_ns for path in tmp_path.glob("shard-*")}

    # When a document is written
    index.upsert([_doc("d", "canoe", _axis(3))])

    # Then it is searchable, no vector file was rewritten, and the next checkpoint saves it
    assert _ids(index, "canoe", _axis(3)) >= {"d"}
    assert {path.name: path.stat().st_mtime_ns for path in tmp_path.glob("shard-*")} == snapshot
    index.close()
    assert _reopen(tmp_path).get(TENANT, "d") == index.get(TENANT, "d")


@pytest.mark.parametrize(
    "damage",
    [
        "manifest deleted", "rows truncated", "ids deleted", "graph truncated", "graph deleted",
        "lexical deleted", "older format", "folder emptied",
    ],
)  # fmt: skip
def test_a_missing_or_damaged_index_is_refused(tmp_path: Path, damage: str) -> None:
    import json
    import shutil

    exact = PersistedIndex(tmp_path / "exact", ann_threshold=None)
    exact.upsert([_doc("a", "kayak", _axis(0))])
    exact.close()
    _seeded(tmp_path / "graph").close()  # 3 documents past the threshold of 2: a graph shard
    target, _, how = damage.partition(" ")
    folder = tmp_path / ("exact" if target == "rows" else "graph")
    pattern = {"rows": "*.rows.npy", "ids": "*.ids.npy", "graph": "*.usearch"}.get(target, "*")
    path = next(folder.glob(f"shard-{pattern}"))
    if damage == "manifest deleted":
        (folder / "manifest.json").unlink()
    elif damage == "older format":  # a folder format 3 wrote: voyager's graphs
        manifest = json.loads((folder / "manifest.json").read_text())
        (folder / "manifest.json").write_text(json.dumps(manifest | {"format": 3}))
    elif damage == "lexical deleted":
        shutil.rmtree(folder / "lexical-memory")
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    elif how == "deleted":
        path.unlink()
    else:
        shutil.rmtree(folder)
        folder.mkdir()

    with pytest.raises(IndexFileError):
        PersistedIndex.load(folder, ann_threshold=2)


# -- start-up against the store (wiring) ------------------------------------------------------


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, local_index_ann_threshold=4)


def _engine(settings: Settings) -> Engine:
    store = SqliteStore(database_path(settings))
    return Engine(
        limits=Limits.of(settings),
        store=store,
        queue=ListQueue(),
        index=local_index.local_index(settings, store),
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
    restarted.index.close()  # type: ignore[attr-defined]
    assert len(PersistedIndex.load(folder)) == docs_before


def test_a_restart_with_a_stale_index_catches_up_with_the_store(engine: Engine, settings: Settings) -> None:
    # Given a copy of the index folder, then a third memory and a deleted memory it never saw
    # (an old copy of the folder put back)
    import shutil

    engine.index.close()  # type: ignore[attr-defined]
    folder = local_index.local_index_path(settings)
    shutil.copytree(folder, settings.data_dir / "saved")
    engine = _restart(engine, settings)
    for n in range(21, 29):
        _say(engine, n)
    run_worker(engine)
    gone = sorted(_stored(engine))[0]
    engine.store.delete_memory(TENANT, gone)
    engine.index.close()  # type: ignore[attr-defined]
    shutil.rmtree(folder)
    shutil.copytree(settings.data_dir / "saved", folder)

    # When the engine starts again
    restarted = _restart(engine, settings)

    # Then the index holds exactly the store's memories, turn documents included
    assert _held(restarted) == _stored(restarted)
    assert gone not in _held(restarted)
    turns = restarted.index.search(TENANT, ["thread-1"], "kayak", [], k=50, kind="turn")
    assert {hit.memory_id for hit in turns} == _stored(restarted)


def test_a_delete_and_a_fork_reach_the_index_on_disk(engine: Engine, settings: Settings) -> None:
    # Given a dialog extracted into a memory
    memory = next(m for m in engine.store.iter_memories(TENANT) if "d3" in m.source_dialog_uuids)

    # When the session is forked after that memory, the dialog deleted, and the server stopped
    fork.run(
        engine,
        TENANT,
        ForkRequest(source_session_uuid="s1", target_session_uuid="s2", cutoff_dialog_uuid="d8"),
    )
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid="d3"))
    engine.index.close()  # type: ignore[attr-defined]
    loaded = PersistedIndex.load(local_index.local_index_path(settings))

    # Then the files hold neither the memory nor its turn documents, and the copy is searchable
    assert memory.memory_id not in loaded.memory_ids().get(TENANT, set())
    turns = loaded.search(TENANT, ["thread-1", "s2"], "kayak", [], k=50, kind="turn")
    assert memory.memory_id not in {hit.memory_id for hit in turns}
    copies = {m.memory_id for m in engine.store.list_memories(TENANT, "s2")}
    assert copies and {hit.doc_id for hit in loaded.search(TENANT, ["s2"], "kayak", [], k=10)} == copies


def test_a_start_after_a_crash_that_only_added_memories_catches_up_without_a_rebuild(
    engine: Engine, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a checkpointed index, more turns extracted, then the process dying before a checkpoint
    engine.index.checkpoint()  # type: ignore[attr-defined]
    for n in range(21, 41):
        _say(engine, n)
    run_worker(engine)
    engine.index.lexical.close()  # type: ignore[attr-defined]  # what the process's exit releases

    # When the engine starts again
    restarted = _restart(engine, settings)

    # Then the later words were dropped and the memories indexed again from the store, no rebuild
    assert "catching up from the store" in caplog.text and "rebuilding" not in caplog.text
    assert len(_stored(restarted)) > 2 and _held(restarted) == _stored(restarted)
    turns = restarted.index.search(TENANT, ["thread-1"], "kayak", [], k=50, kind="turn")
    assert {hit.memory_id for hit in turns} == _stored(restarted)


def test_a_start_after_a_crash_rebuilds_the_index_from_the_store(
    engine: Engine, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a checkpointed memory deleted and more turns extracted, then the process dying before
    # the next checkpoint
    engine.index.checkpoint()  # type: ignore[attr-defined]
    memory = next(m for m in engine.store.iter_memories(TENANT) if "d3" in m.source_dialog_uuids)
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid="d3"))
    for n in range(21, 29):
        _say(engine, n)
    run_worker(engine)
    engine.index.lexical.close()  # type: ignore[attr-defined]  # what the process's exit releases

    # When the engine starts again
    restarted = _restart(engine, settings)

    # Then the index was rebuilt from the store, saying why, and holds exactly its memories
    assert "after its last checkpoint" in caplog.text and "rebuilding it from the store" in caplog.text
    assert _held(restarted) == _stored(restarted) and memory.memory_id not in _held(restarted)
    turns = restarted.index.search(TENANT, ["thread-1"], "kayak", [], k=50, kind="turn")
    assert {hit.memory_id for hit in turns} == _stored(restarted)


def _voyager_era_folder(folder: Path) -> list[str]:
    """The folder as format 3 left it: tantivy's folders as now, and each graph shard in
    voyager's file (a node per document in float32) with its ids; returns the old files' names."""
    import json

    import numpy as np

    manifest = json.loads((folder / "manifest.json").read_text())
    old = []
    for path in folder.glob("shard-*.usearch"):
        voyager = path.with_name(path.name.removesuffix(".usearch") + ".hnsw")
        voyager.write_bytes(b"VOYA" + np.zeros(64, dtype=np.float32).tobytes())
        path.unlink()
        old.append(voyager.name)
    (folder / "manifest.json").write_text(json.dumps(manifest | {"format": 3}))
    return old


def _hand_made_folder(folder: Path) -> list[str]:
    """The folder as format 2 left it: hand-made arrays and a journal."""
    import json
    import shutil

    shutil.rmtree(folder)
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"format": 2, "generation": 7, "shards": []}))
    (folder / "shard-0123456789abcdef0123-7.arrays").write_bytes(b"MEIA" + bytes(60))
    (folder / "journal-7.log").write_bytes(bytes(12))
    return ["shard-0123456789abcdef0123-7.arrays", "journal-7.log"]


@pytest.mark.parametrize("older", [_voyager_era_folder, _hand_made_folder], ids=["voyager", "hand-made"])
def test_a_folder_of_an_earlier_index_format_is_rebuilt_at_start(
    engine: Engine,
    settings: Settings,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    older: Any,
) -> None:
    # Given the index folder as an earlier version wrote it (graph shards included: the
    # threshold is 4 documents)
    engine.index.close()  # type: ignore[attr-defined]
    folder = local_index.local_index_path(settings)
    old_files = older(folder)
    assert old_files

    # When the engine starts on it
    restarted = _restart(engine, settings)

    # Then the index is rebuilt from the store, saying so with a progress line, and the old files
    # are gone
    assert "another format" in caplog.text and "rebuilding it from the store" in caplog.text
    assert "index rebuild" in capsys.readouterr().err
    assert _held(restarted) == _stored(restarted)
    assert not any((folder / name).exists() for name in old_files)
    assert list(folder.glob("shard-*.usearch"))


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
