"""The local index on disk, beside the SQLite file: tantivy's folders, numpy files, one manifest.

Layout of the folder (`memory-engine.sqlite3.index/`):
- `lexical-memory/`, `lexical-turn/`: the tantivy index of each document kind, committed by every
  write (tantivy's own atomic commits);
- `shard-<id>-<generation>.*`: one shard's vectors as numpy files (ids, rows; the window
  vectors' ids and rows), loaded memory-mapped, or usearch's graph file (read into memory) and
  its ids;
- `manifest.json`: format version, generation, each shard's files and dimension, and the tantivy
  commit (opstamp) of each kind the vectors were saved with.

A checkpoint (at the end of a bulk write, and at close) saves the shards that
writes touched since the last one, swaps the manifest in atomically and removes the files nothing
names any more. Words tantivy committed after the checkpoint (the process died before the next)
are dropped at load. Loading raises `IndexFileError` on anything missing, unreadable or of another
format, and when a document was deleted or replaced after the checkpoint (the words left would
disagree with the vectors). The store stays the system of record:
`memory_engine_app.local_index.open_local_index` rebuilds the index from it then, with a progress
bar, and otherwise compares what was loaded with the store and indexes the difference
(`indexing.sync`).

The folder is trusted like the SQLite file beside it, and written by one process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory_engine.adapters.local.lexical import KINDS
from memory_engine.adapters.local.memory_index import DEFAULT_ANN_THRESHOLD, LocalSearchIndex
from memory_engine.adapters.local.shards import Shard, ShardKey
from memory_engine.adapters.local.vectors import GraphParams, GraphVectors
from memory_engine.ports import DocKind

__all__ = ["FORMAT_VERSION", "IndexFileError", "PersistedIndex", "stored_memory_ids"]

log = logging.getLogger("memory_engine.index")

# 5: tantivy documents carry `said`, what an event-time range filters on (4: HNSW graphs in
# usearch's files, float16; 3: voyager's; 2: hand-written array files and a journal); any other
# is rebuilt.
FORMAT_VERSION = 5
MANIFEST = "manifest.json"


class IndexFileError(Exception):
    """The index folder is missing, from another format, or damaged: rebuild it from the store."""


class PersistedIndex(LocalSearchIndex):
    """A `LocalSearchIndex` kept in `directory`: words in tantivy (every write committed), vectors
    saved at a checkpoint (the end of a bulk write, and `close`). `PersistedIndex(directory)`
    starts an empty index there, removing whatever the folder held; `load` opens the one it holds.

    No checkpoint between: tantivy commits after one would disagree with its vectors all the
    same, and saving a graph of 800k nodes takes seconds under the lock."""

    def __init__(
        self,
        directory: Path,
        ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
        graph: GraphParams | None = None,
        _keep: bool = False,
    ) -> None:
        if not _keep:
            shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True, exist_ok=True)
        super().__init__(ann_threshold, graph, directory)
        self.directory = directory
        self.generation = 0
        self.lexical.generation = 1
        self._saved: dict[ShardKey, tuple[str, list[str]]] = {}  # each saved shard's prefix, files
        self._opstamps: dict[DocKind, int] = {}  # the tantivy commits the last manifest names

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Graph inserts on every core, and one checkpoint at the end (rebuilds)."""
        with self.lock.writing():
            self.insert_threads = -1
            try:
                yield
            finally:
                self.insert_threads = 1
                self.checkpoint()

    def checkpoint(self) -> None:
        """Save the shards changed since the last checkpoint and a new manifest."""
        with self.lock.writing():
            if not self.dirty and self._opstamps == self.lexical.opstamps:
                return
            generation = self.generation + 1
            saved = {key: files for key, files in self._saved.items() if key in self.shards}
            for key in self.dirty:
                if key in self.shards:
                    prefix = _shard_name(key, generation)
                    saved[key] = (
                        prefix,
                        [path.name for path in self.shards[key].save(self.directory / prefix)],
                    )
            manifest = {
                "format": FORMAT_VERSION,
                "generation": generation,
                "opstamps": self.lexical.opstamps,
                "shards": [
                    {
                        "tenant": key[0], "kind": key[1], "thread": key[2], "dim": self.dims[key[0]],
                        "prefix": prefix, "graph": isinstance(self.shards[key].vectors, GraphVectors),
                        "windows": any(".windows." in name for name in names),
                    }
                    for key, (prefix, names) in saved.items()
                ],
            }  # fmt: skip
            named = {name for _, names in saved.values() for name in names}
            for name in named:
                _fsync(self.directory / name)
            _atomic_write(self.directory / MANIFEST, json.dumps(manifest).encode())
            self.generation, self._saved = generation, saved
            self.lexical.generation = generation + 1
            self._opstamps = dict(self.lexical.opstamps)
            self.dirty.clear()
            for path in self.directory.glob("shard-*"):
                if path.name not in named:
                    path.unlink(missing_ok=True)

    def close(self) -> None:
        """Checkpoint, and release tantivy's writers (so the folder can be opened again)."""
        with self.lock.writing():
            self.checkpoint()
            self.lexical.close()

    # -- load ---------------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        directory: Path,
        ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
        graph: GraphParams | None = None,
    ) -> PersistedIndex:
        """The index as the folder holds it, or IndexFileError."""
        try:
            manifest = json.loads((directory / MANIFEST).read_bytes())
        except FileNotFoundError as error:
            raise IndexFileError(f"no index manifest at {directory / MANIFEST}") from error
        except ValueError as error:
            raise IndexFileError(f"the index manifest {directory / MANIFEST} is not JSON") from error
        found = manifest.get("format") if isinstance(manifest, dict) else None
        if found != FORMAT_VERSION:
            raise IndexFileError(
                f"the index at {directory} has another format ({found}) than this version's "
                f"({FORMAT_VERSION})"
            )
        try:
            index = cls(directory, ann_threshold, graph, _keep=True)
        except Exception as error:  # tantivy's own checks of its folders
            raise IndexFileError(f"the index at {directory} could not be opened ({error})") from error
        try:
            params = index.graph
            for entry in manifest["shards"]:
                key: ShardKey = (entry["tenant"], entry["kind"], entry["thread"])
                prefix = directory / entry["prefix"]
                shard = Shard.load(
                    prefix, int(entry["dim"]), params if entry["graph"] else None, entry["windows"]
                )
                index.shards[key] = shard
                index.dims[key[0]] = int(entry["dim"])
                index._saved[key] = (
                    entry["prefix"],
                    [p.name for p in directory.glob(f"{entry['prefix']}.*")],
                )
            index.generation = int(manifest["generation"])
            index._opstamps = {kind: manifest["opstamps"][kind] for kind in KINDS}
            if index.lexical.opstamps != index._opstamps:
                index._drop_after_checkpoint()
            index.lexical.generation = index.generation + 1
        except IndexFileError:
            index.lexical.close()
            raise
        except Exception as error:  # a missing or damaged file: whatever numpy or usearch raise
            index.lexical.close()
            raise IndexFileError(
                f"the index at {directory} could not be read ({type(error).__name__}: {error})"
            ) from error
        return index

    def _drop_after_checkpoint(self) -> None:
        """Words written after the last checkpoint (the process died before the next): dropped,
        so the store's catch-up indexes those memories again. Safe only when what is left is what
        the checkpoint saved, which equal counts prove (dropping can only remove): a document
        deleted or replaced meanwhile leaves fewer words than vectors, and a rebuild."""
        left = self.lexical.drop_after(self.generation)
        saved = {kind: sum(len(s) for key, s in self.shards.items() if key[1] == kind) for kind in KINDS}
        if left != saved:
            raise IndexFileError(
                f"the index at {self.directory} was written after its last checkpoint (the process "
                f"stopped without closing it), deletes included ({left} documents left of {saved})"
            )
        log.warning("index: dropped the words written after the last checkpoint; catching up from the store")


def stored_memory_ids(database: Path) -> dict[str, set[str]]:
    """Per tenant, the memory ids the SQLite store holds (read-only; the index's high-water mark)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        held: dict[str, set[str]] = {}
        for tenant, memory_id in conn.execute("SELECT tenant, memory_id FROM memories"):
            held.setdefault(tenant, set()).add(memory_id)
        return held
    except sqlite3.OperationalError:  # a fresh database: no table yet
        return {}
    finally:
        conn.close()


def _shard_name(key: ShardKey, generation: int) -> str:
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:20]
    return f"shard-{digest}-{generation}"


def _atomic_write(path: Path, payload: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _fsync(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())
