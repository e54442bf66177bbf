"""Big local data folders for the retrieve and restart benchmarks, built once and cached.

A fixture is what `memory-engine serve` would find after a long life: a SQLite store with N
memories in one memory thread (the worst case: every memory is a candidate) plus a live session
with 12 buffered turns, and the persisted local index beside it (each memory's own document and
one per source turn with its window vector, as extraction indexes them: 9 documents per memory).
Text is LoCoMo dev turns drawn at random; vectors are synthetic (`Latent`). Tenant `local`, so
the local server's own API key finds them.

Building 100k memories inserts 900k vectors into an HNSW graph: minutes on two cores, so each
size is built once under $MEMORY_ENGINE_BENCH_CACHE (default /tmp/memory-engine-bench) and reused
while the fixture's version and the index format stay the same. A bigger size starts from a copy
of the biggest smaller one; where a folder of the same data holds another index format (a
checkout before or after this one), its store is copied and this version's index built beside it
(from the same generated documents).
"""

from __future__ import annotations

import os
import random
import shutil
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.common import locomo_turns
from memory_engine.adapters.local.index_files import FORMAT_VERSION, PersistedIndex
from memory_engine.adapters.local.sqlite_rows import insert_memories, insert_session, insert_turns
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.indexing.documents import index_documents
from memory_engine.models.domain import Memory, MemoryFields, Session, Turn
from memory_engine.ports import EmbedMode

if TYPE_CHECKING:
    import numpy as np

TENANT = "local"
THREAD = "thread-0"
# The vectors' length: e5's 384, or another model's (MEMORY_ENGINE_BENCH_DIM=768 for
# EmbeddingGemma: bench/quality/embedders.py), whose folders are cached apart.
DIM = int(os.environ.get("MEMORY_ENGINE_BENCH_DIM", "384"))
BUFFERED_TURNS = 12
# 2: turn documents carry window vectors, as extraction now writes them.
FIXTURE = 2
PREFIX = f"v{FIXTURE}" if DIM == 384 else f"v{FIXTURE}d{DIM}"
VERSION = f"{PREFIX}-f{FORMAT_VERSION}"
DATABASE = "memory-engine.sqlite3"
_CHUNK = 2000
_CREATED = datetime(2026, 1, 1, tzinfo=UTC)


class Latent:
    """Unit vectors with the structure of sentence embeddings: a 32-dimensional latent space
    mapped into 384 dimensions, plus a little isotropic noise. Uniform random 384-d vectors are the
    one case where every point is nearly equidistant from every other (no neighbourhoods for an
    HNSW graph to follow, nor for a real embedder to produce); a memory's turns sit near it."""

    def __init__(self, dim: int = DIM, rank: int = 32, seed: int = 11) -> None:
        import numpy as np

        self.dim, self.rank = dim, rank
        self.mix = np.random.default_rng(seed).standard_normal((rank, dim)).astype(np.float32) / np.sqrt(rank)

    def embed(self, latent: np.ndarray[Any, Any], rng: np.random.Generator) -> np.ndarray[Any, Any]:
        import numpy as np

        raw = latent @ self.mix + 0.25 * rng.standard_normal((len(latent), self.dim)).astype(np.float32)
        return (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32)


class PrecomputedEmbedder:
    """Query vectors without a model, fixed per text, drawn like the documents' (`Latent`)."""

    dimension = DIM

    def __init__(self) -> None:
        self._latent = Latent()
        self._cache: dict[str, list[float]] = {}

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        vector = self._cache.get(text)
        if vector is None:
            import zlib

            import numpy as np

            rng = np.random.default_rng(zlib.crc32(text.encode()))
            latent = rng.standard_normal((1, self._latent.rank)).astype(np.float32)
            vector = self._cache[text] = self._latent.embed(latent, rng)[0].tolist()
        return vector


def corpus() -> list[str]:
    turns = [text for _, _, text in locomo_turns()]
    if turns:
        return turns
    rng = random.Random(3)
    words = [f"w{i}" for i in range(5000)]
    return [" ".join(rng.choice(words) for _ in range(20)) for _ in range(3000)]


def cache_root() -> Path:
    return Path(os.environ.get("MEMORY_ENGINE_BENCH_CACHE", "/tmp/memory-engine-bench"))


def data_dir(memories: int) -> Path:
    """The cached data folder with `memories` memories, built first if need be."""
    folder = cache_root() / f"{VERSION}-{memories}"
    if (folder / "ready").exists():
        return folder
    started = time.perf_counter()
    other = [path for path in cache_root().glob(f"{PREFIX}-f*-{memories}") if (path / "ready").exists()]
    if other:  # the same data with another index format: the start of a new version rebuilds it
        _rebuilt(other[0], folder)
        (folder / "ready").write_text(
            f"index built beside the store of {other[0].name} in {time.perf_counter() - started:.0f} s\n"
        )
        return folder
    have, source = _biggest_below(memories)
    shutil.rmtree(folder, ignore_errors=True)
    if source is not None:
        shutil.copytree(source, folder)
        (folder / "ready").unlink()
    else:
        folder.mkdir(parents=True)
    _grow(folder, have, memories)
    (folder / "ready").write_text(f"built in {time.perf_counter() - started:.0f} s\n")
    return folder


def _biggest_below(memories: int) -> tuple[int, Path | None]:
    """The biggest ready folder of this version smaller than `memories`, with its size."""
    smaller = sorted(
        (int(path.name.rsplit("-", 1)[1]), path)
        for path in cache_root().glob(f"{VERSION}-*")
        if (path / "ready").exists() and int(path.name.rsplit("-", 1)[1]) < memories
    )
    return smaller[-1] if smaller else (0, None)


def _rebuilt(source: Path, folder: Path) -> None:
    """`folder` with the store of `source` and this version's index of the same documents. The
    fixture's store holds no source turns (its turn documents are made from generated ones), so
    the documents are generated again, chunk by chunk as `_grow` made them, not read back."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copy2(source / DATABASE, folder / DATABASE)
    memories = int(source.name.rsplit("-", 1)[1])
    have, smaller = _biggest_below(memories)
    if smaller is not None:  # this version's index of the first `have` memories, grown
        shutil.copytree(smaller / f"{DATABASE}.index", folder / f"{DATABASE}.index")
    index = (PersistedIndex.load if have else PersistedIndex)(folder / f"{DATABASE}.index")
    with index.bulk():
        for made in _made(have, memories, f"index {memories:,}"):
            index.upsert([doc for memory, sources in made for doc in index_documents(memory, sources)])
    index.close()


def _grow(folder: Path, have: int, memories: int) -> None:
    store = SqliteStore(folder / DATABASE)
    index = (
        PersistedIndex.load(folder / f"{DATABASE}.index")
        if have
        else PersistedIndex(folder / f"{DATABASE}.index")
    )
    with index.bulk():
        for made in _made(have, memories, f"fixture {memories:,}"):
            with store._db.write() as conn:  # bulk path: a benchmark fixture, not an API
                insert_memories(conn, [memory for memory, _ in made])
            index.upsert([doc for memory, sources in made for doc in index_documents(memory, sources)])
    if not have:
        _live_session(store, corpus())
    index.close()
    store.close()


def _made(have: int, memories: int, desc: str) -> Iterator[list[tuple[Memory, list[Turn]]]]:
    """Memories `have`..`memories` with their source turns, in chunks; the same ones every time
    (each chunk drawn from seeds of its first position)."""
    import numpy as np
    from tqdm import tqdm

    turns = corpus()
    latent = Latent()
    with tqdm(total=memories, initial=have, unit=" memories", desc=desc) as bar:
        for start in range(have, memories, _CHUNK):
            stop = min(memories, start + _CHUNK)
            rng = np.random.default_rng(start)
            base = rng.standard_normal((stop - start, latent.rank)).astype(np.float32)
            own = latent.embed(base, rng)
            parts = latent.embed(
                np.repeat(base, 8, axis=0)
                + 0.7 * rng.standard_normal(((stop - start) * 8, latent.rank)).astype(np.float32),
                rng,
            )
            windows = _windows(parts.reshape(stop - start, 8, DIM)).reshape(-1, DIM)
            text_rng = random.Random(start)
            made = [
                _memory(i, turns, text_rng, own[i - start], parts[(i - start) * 8 : (i - start) * 8 + 8])
                for i in range(start, stop)
            ]
            yield [
                (
                    memory.model_copy(update={"window_embeddings": windows[at * 8 : at * 8 + 8].tolist()}),
                    sources,
                )
                for at, (memory, sources) in enumerate(made)
            ]
            bar.update(stop - start)


def _windows(turns: Any) -> Any:
    """Per memory (rows of 8 turn vectors), each turn's window vector: the normalised sum of it
    and its neighbours in the memory, as a window's embedding sits near its turns'."""
    import numpy as np

    summed = turns.copy()
    summed[:, 1:] += turns[:, :-1]
    summed[:, :-1] += turns[:, 1:]
    return (summed / np.linalg.norm(summed, axis=2, keepdims=True)).astype(np.float32)


def _live_session(store: SqliteStore, turns: list[str]) -> None:
    rng = random.Random(0)
    session = Session(
        tenant=TENANT, session_uuid="s-live", parent_session_uuid=THREAD, user_name="Alex",
        language="en", created_at=_CREATED, next_seq=BUFFERED_TURNS,
    )  # fmt: skip
    live = [
        Turn(
            tenant=TENANT,
            session_uuid="s-live",
            dialog_uuid=f"live-{i}",
            seq=i,
            query=rng.choice(turns),
            answer="",
            user_name="Alex",
            timestamp=_CREATED,
            created_at=_CREATED,
        )
        for i in range(BUFFERED_TURNS)
    ]
    with store._db.write() as conn:
        insert_session(conn, session)
        insert_turns(conn, live)


def _memory(
    i: int, turns: list[str], rng: random.Random, vector: Any, turn_vectors: Any
) -> tuple[Memory, list[Turn]]:
    created = _CREATED + timedelta(minutes=i)
    lines = [rng.choice(turns) for _ in range(8)]
    words = sorted(
        {word.strip(".,!?").lower() for line in lines for word in line.split()[1:] if len(word) > 5}
    )
    fields = MemoryFields(
        summary=" ".join(lines[:3]),
        keywords=words[:20],
        key_facts=lines[3:6],
        key_dialogue=lines[6:8],
        characters=sorted({line.split(":", 1)[0] for line in lines}),
    )
    sources = [
        Turn(
            tenant=TENANT,
            session_uuid=f"s-{i // 100}",
            dialog_uuid=f"d-{i}-{j}",
            seq=(i % 100) * 8 + j,
            query=line.partition(": ")[2] or line,
            user_name=line.partition(": ")[0],
            timestamp=created,
            created_at=created,
        )
        for j, line in enumerate(lines)
    ]
    memory = Memory(
        tenant=TENANT,
        memory_id=f"{created:%Y%m%d_%H%M%S}_{i:06x}",
        session_uuid=f"s-{i // 100}",
        parent_session_uuid=THREAD,
        fields=fields,
        source_dialog_uuids=[f"d-{i}-{j}" for j in range(8)],
        first_seq=(i % 100) * 8,
        last_seq=(i % 100) * 8 + 7,
        embedding=vector.tolist(),
        turn_embeddings=turn_vectors.tolist(),
        source_text="\n".join(lines),
        created_at=created,
    )
    return memory, sources


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="build the cached benchmark data folders")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 111_112])
    for size in parser.parse_args().sizes:
        print(data_dir(size), flush=True)


if __name__ == "__main__":
    main()
