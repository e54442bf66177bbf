"""The local index on disk, beside the SQLite file: per-shard snapshots plus an append-only journal.

Layout of the folder (`memory-engine.sqlite3.index/`):
- `manifest.json`: format version, generation, and per shard its files with size and CRC-32;
- `shard-<id>-<generation>.arrays`: one shard's postings, metadata and (exact shards) vectors or
  (graph shards) labels as flat arrays (`shard_file`: read in one go, no unpickling);
- `shard-<id>-<generation>.hnsw`: a graph shard's HNSW graph (voyager's own format);
- `journal-<generation>.log`: every write since that generation's snapshot, appended as it
  happens (length, CRC-32, pickled record: `index_journal`), so a write never rewrites a file.

A checkpoint (journal past `journal_limit` documents, and at close) writes the shards that writes
touched since the last one, fsyncs them, swaps the manifest in atomically, starts a new journal
and removes files nothing names any more. Loading checks every named file's size and CRC-32 and
raises `IndexFileError` on anything missing, short or different (a folder of another format
version too); a torn journal tail (a crash in mid-append) is dropped and logged. The graphs load
and their files are checksummed in threads while the shards' arrays are read (voyager and zlib
release the GIL), and nothing is used before every check passed. The store stays the system of
record: `indexing.sync` compares what was loaded with the store and indexes the difference, or
rebuilds from scratch.

The folder is trusted like the SQLite file beside it (the journal pickles), and written by one
process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from memory_engine.adapters.local.array_bm25 import Bm25Stats
from memory_engine.adapters.local.array_file import ArrayFileError, read_arrays, write_arrays
from memory_engine.adapters.local.index_journal import frame, journal_name, records
from memory_engine.adapters.local.memory_index import DEFAULT_ANN_THRESHOLD, LocalSearchIndex
from memory_engine.adapters.local.shard_file import read_shard, shard_arrays
from memory_engine.adapters.local.shards import Shard, ShardKey, TenantState
from memory_engine.adapters.local.vectors import GraphParams, GraphVectors, load_graph
from memory_engine.ports import IndexDocument

__all__ = ["FORMAT_VERSION", "IndexFileError", "PersistedIndex", "stored_memory_ids"]

log = logging.getLogger("memory_engine.index")

# 2: shards as arrays (1 pickled them); a folder of another version is rebuilt from the store.
FORMAT_VERSION = 2
MANIFEST = "manifest.json"
DEFAULT_JOURNAL_LIMIT = 20_000  # documents journaled before a checkpoint (bounds replay at start)


class IndexFileError(Exception):
    """The index folder is missing, from another format, or damaged: rebuild it from the store."""


class PersistedIndex(LocalSearchIndex):
    """A `LocalSearchIndex` whose every write is applied, then journaled in `directory`, under the
    index's lock (so the journal's order is the order writes took effect)."""

    def __init__(
        self,
        directory: Path,
        ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
        graph: GraphParams | None = None,
        journal_limit: int = DEFAULT_JOURNAL_LIMIT,
    ) -> None:
        super().__init__(ann_threshold, graph)
        self.directory = directory
        self.journal_limit = journal_limit
        self.generation = _current_generation(directory)  # a fresh index never reuses file names
        self._bulk = False
        self._entries: dict[tuple[str, ShardKey], dict[str, Any]] = {}  # manifest entry per shard
        self._journal: IO[bytes] | None = None
        self._journaled = 0

    # -- writes: memory, then the journal ------------------------------------------------------

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if not docs:
            return
        import numpy as np

        with self.lock:
            record = [
                (
                    doc.model_dump(exclude={"vector", "window_vector"}),
                    np.asarray(doc.vector, dtype=np.float32),
                    None if doc.window_vector is None else np.asarray(doc.window_vector, dtype=np.float32),
                )
                for doc in docs
            ]
            super().upsert(docs)  # validates first: a refused batch is not journaled
            self._append(("upsert", record), len(docs))

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        with self.lock:
            super().delete(tenant, doc_ids)
            self._append(("delete", tenant, list(doc_ids)), len(doc_ids))

    def clear(self, tenant: str | None = None) -> None:
        with self.lock:
            super().clear(tenant)
            self._append(("clear", tenant), 1)

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Writes inside are not journaled; one checkpoint at the end persists them (rebuilds:
        journaling a whole store would write it twice). A crash inside loses them from the index
        only: the next start finds the index behind the store and catches up."""
        with self.lock:
            self._bulk, self.insert_threads = True, -1
            try:
                yield
            finally:
                self._bulk, self.insert_threads = False, 1
                self.checkpoint()

    def _append(self, record: tuple[Any, ...], weight: int) -> None:
        if self._bulk:
            return
        if self._journal is None:
            self._journal = open(self.directory / journal_name(self.generation), "ab")  # noqa: SIM115
        self._journal.write(frame(record))
        self._journal.flush()  # in the OS's hands: a crash of this process loses nothing
        self._journaled += weight
        if self._journaled >= self.journal_limit:
            self.checkpoint()

    # -- checkpoint ---------------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Write the shards changed since the last checkpoint and a new manifest; empty the journal."""
        with self.lock:
            if not self.dirty and self._journaled == 0 and (self.directory / MANIFEST).exists():
                return
            self.directory.mkdir(parents=True, exist_ok=True)
            generation = self.generation + 1
            live = {(tenant, key): shard for tenant, key, shard in self.shards()}
            entries = {where: entry for where, entry in self._entries.items() if where in live}
            for where in self.dirty:
                if where in live:
                    entries[where] = _write_shard(
                        self.directory, where, live[where], self.tenants[where[0]].dim, generation
                    )
            manifest = {
                "format": FORMAT_VERSION,
                "generation": generation,
                "shards": list(entries.values()),
            }
            _atomic_write(self.directory / MANIFEST, json.dumps(manifest).encode())
            if self._journal is not None:
                self._journal.close()
                self._journal = None
            (self.directory / journal_name(generation)).write_bytes(b"")
            self.generation, self._entries, self._journaled = generation, entries, 0
            self.dirty.clear()
            _remove_unnamed(self.directory, entries.values(), generation)

    def close(self) -> None:
        """Checkpoint what the journal holds, so the next start loads without replaying."""
        with self.lock:
            self.checkpoint()
            if self._journal is not None:
                self._journal.close()
                self._journal = None

    # -- load ---------------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        directory: Path,
        ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
        graph: GraphParams | None = None,
        journal_limit: int = DEFAULT_JOURNAL_LIMIT,
    ) -> PersistedIndex:
        """The index as the folder holds it (snapshot plus journal), or IndexFileError."""
        index = cls(directory, ann_threshold, graph, journal_limit)
        try:
            manifest = json.loads((directory / MANIFEST).read_bytes())
        except FileNotFoundError as error:
            raise IndexFileError(f"no index manifest at {directory / MANIFEST}") from error
        except ValueError as error:
            raise IndexFileError(f"the index manifest {directory / MANIFEST} is not JSON") from error
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_VERSION:
            raise IndexFileError(f"the index at {directory} has another format than {FORMAT_VERSION}")
        try:
            entries = list(manifest["shards"])
            generation = int(manifest["generation"])
            for entry in entries:
                for file_name, (size, _) in entry["files"].items():
                    _check_size(directory / file_name, size)  # cheap: before reading anything
            with ThreadPoolExecutor(max_workers=2) as pool:
                graphs = {
                    entry["graph"]: (
                        pool.submit(load_graph, str(directory / entry["graph"])),
                        pool.submit(_check_crc, directory / entry["graph"], *entry["files"][entry["graph"]]),
                    )
                    for entry in entries
                    if entry.get("graph")
                }
                for entry in entries:
                    tenant, key = entry["tenant"], (entry["kind"], entry["thread"])
                    state = index.tenants.get(tenant)
                    if state is None:
                        state = index.tenants[tenant] = TenantState(int(entry["dim"]))
                    kind_stats = state.stats.get(key[0]) or state.stats.setdefault(key[0], Bm25Stats())
                    arrays, strings = read_arrays(directory / entry["data"], *entry["files"][entry["data"]])
                    graph = _awaited(graphs[entry["graph"]]) if entry.get("graph") else None
                    shard, parts = read_shard(arrays, strings, kind_stats, state.dim, index.graph, graph)
                    _link(state, key, shard, parts)
                    index._entries[(tenant, key)] = entry
        except IndexFileError:
            raise
        except ArrayFileError as error:
            raise IndexFileError(str(error)) from error
        except Exception as error:  # a damaged graph or manifest: whatever it raises
            raise IndexFileError(
                f"the index at {directory} could not be read ({type(error).__name__}: {error})"
            ) from error
        index.generation = generation
        replayed = index._replay(directory / journal_name(generation))
        if replayed:
            log.info("index: replayed %d journaled writes from %s", replayed, directory)
        return index

    def _replay(self, path: Path) -> int:
        count = 0
        for record in records(path):
            if record[0] == "upsert":
                docs = [_journaled_document(*entry) for entry in record[1]]
                LocalSearchIndex.upsert(self, docs)
                self._journaled += len(docs)
            elif record[0] == "delete":
                LocalSearchIndex.delete(self, record[1], record[2])
                self._journaled += len(record[2])
            else:
                LocalSearchIndex.clear(self, record[1])
                self._journaled += 1
            count += 1
        return count


def _current_generation(directory: Path) -> int:
    try:
        return int(json.loads((directory / MANIFEST).read_bytes())["generation"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


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


# -- shard files ------------------------------------------------------------------------------


def _shard_name(where: tuple[str, ShardKey], generation: int) -> str:
    tenant, (kind, thread) = where
    digest = hashlib.sha256(f"{tenant}\0{kind}\0{thread}".encode()).hexdigest()[:20]
    return f"shard-{digest}-{generation}"


def _write_shard(
    directory: Path, where: tuple[str, ShardKey], shard: Shard, dim: int, generation: int
) -> dict[str, Any]:
    name = _shard_name(where, generation)
    files: dict[str, list[int]] = {}
    graph_name = None
    if isinstance(shard.vectors, GraphVectors):
        graph_file = directory / f"{name}.hnsw"
        shard.vectors.save(str(graph_file))
        _fsync(graph_file)
        graph_name = graph_file.name
        files[graph_name] = _size_and_crc(graph_file)
    files[f"{name}.arrays"] = write_arrays(directory / f"{name}.arrays", *shard_arrays(shard))
    tenant, (kind, thread) = where
    return {
        "tenant": tenant,
        "kind": kind,
        "thread": thread,
        "dim": dim,
        "data": f"{name}.arrays",
        "graph": graph_name,
        "files": files,
    }


def _link(state: TenantState, key: ShardKey, shard: Shard, parts: Callable[[], dict[str, list[str]]]) -> None:
    """Add a loaded shard to its tenant: where each document is, and (grouped when first needed)
    memories' turn documents."""
    state.shards[key] = shard
    if state.where:
        state.where.update(dict.fromkeys(shard.meta, key))
    else:  # the tenant's first shard: one pass instead of building a dict and copying it
        state.where = dict.fromkeys(shard.meta, key)
    state.loaded_parts.append(parts)


def _check_size(path: Path, size: int) -> None:
    try:
        actual = path.stat().st_size
    except FileNotFoundError as error:
        raise IndexFileError(f"index file {path} is missing") from error
    if actual != size:
        raise IndexFileError(f"index file {path} is damaged (its size differs)")


def _check_crc(path: Path, size: int, crc: int) -> None:
    if _size_and_crc(path) != [size, crc]:
        raise IndexFileError(f"index file {path} is damaged (size or checksum differs)")


def _awaited(pending: tuple[Future[Any], Future[None]]) -> Any:
    """The loaded graph once its file's checksum matched."""
    graph, checked = pending
    checked.result()
    return graph.result()


# -- files ------------------------------------------------------------------------------------


def _size_and_crc(path: Path) -> list[int]:
    crc = size = 0
    chunk = bytearray(1 << 24)  # one buffer reused: no allocation per read
    view = memoryview(chunk)
    with open(path, "rb", buffering=0) as handle:
        while read := handle.readinto(chunk):
            crc = zlib.crc32(view[:read], crc)
            size += read
    return [size, crc]


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


def _remove_unnamed(directory: Path, entries: Any, generation: int) -> None:
    named = {MANIFEST, journal_name(generation)}
    for entry in entries:
        named.update(entry["files"])
    for path in directory.iterdir():
        if path.name not in named and (path.name.startswith(("shard-", "journal-")) or path.suffix == ".tmp"):
            path.unlink(missing_ok=True)


def _journaled_document(fields: dict[str, Any], vector: Any, window: Any = None) -> IndexDocument:
    """An upsert's document back from the journal (records written before window vectors have
    no third element)."""
    return IndexDocument(
        **fields, vector=vector.tolist(), window_vector=None if window is None else window.tolist()
    )
