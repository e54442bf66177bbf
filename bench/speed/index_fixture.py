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
of the biggest smaller one; a folder of the index format before is upgraded instead of rebuilt
(`bench.index_upgrade`).
"""

from __future__ import annotations

import os
import random
import shutil
import time
from collections.abc import Sequence
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
DIM = 384
BUFFERED_TURNS = 12
# 2: turn documents carry window vectors, as extraction now writes them.
FIXTURE = 2
VERSION = f"v{FIXTURE}-f{FORMAT_VERSION}"
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
    previous = cache_root() / f"v{FIXTURE}-f{FORMAT_VERSION - 1}-{memories}"
    if FORMAT_VERSION == 2 and (previous / "ready").exists():  # same data, shards re-encoded
        from bench.speed.index_upgrade import upgrade_from_format_1

        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(previous, folder)
        (folder / "ready").unlink()
        upgrade_from_format_1(folder / f"{DATABASE}.index")
        (folder / "ready").write_text(
            f"upgraded from {previous.name} in {time.perf_counter() - started:.0f} s\n"
        )
        return folder
    smaller = sorted(
        (int(path.name.rsplit("-", 1)[1]), path)
        for path in cache_root().glob(f"{VERSION}-*")
        if (path / "ready").exists() and int(path.name.rsplit("-", 1)[1]) < memories
    )
    shutil.rmtree(folder, ignore_errors=True)
    if smaller:
        have, source = smaller[-1]
        shutil.copytree(source, folder)
        (folder / "ready").unlink()
    else:
        have = 0
        folder.mkdir(parents=True)
    _grow(folder, have, memories)
    (folder / "ready").write_text(f"built in {time.perf_counter() - started:.0f} s\n")
    return folder


def _grow(folder: Path, have: int, memories: int) -> None:
    import numpy as np
    from tqdm import tqdm

    store = SqliteStore(folder / DATABASE)
    index = (
        PersistedIndex.load(folder / f"{DATABASE}.index")
        if have
        else PersistedIndex(folder / f"{DATABASE}.index")
    )
    turns = corpus()
    latent = Latent()
    with (
        index.bulk(),
        tqdm(total=memories, initial=have, unit=" memories", desc=f"fixture {memories:,}") as bar,
    ):
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
            made = [
                (
                    memory.model_copy(update={"window_embeddings": windows[at * 8 : at * 8 + 8].tolist()}),
                    sources,
                )
                for at, (memory, sources) in enumerate(made)
            ]
            with store._db.write() as conn:  # bulk path: a benchmark fixture, not an API
                insert_memories(conn, [memory for memory, _ in made])
            index.upsert([doc for memory, sources in made for doc in index_documents(memory, sources)])
            bar.update(stop - start)
    if not have:
        _live_session(store, turns)
    store.close()


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
