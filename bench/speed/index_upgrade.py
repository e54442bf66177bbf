"""Rewrite a cached fixture's format-1 index folder (pickled shards) in the current format.

Building the 100k fixture takes ~20 minutes (900k HNSW inserts on two cores); its data does not
change with the index format, so `bench.speed.index_fixture` makes a folder of the current format from
a cached one of the format before: the same store, the same shards re-encoded, the same graphs
(loaded and saved again). Format 1 is read here, the only place still reading it; the engine
itself rebuilds such a folder from the store.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from memory_engine.adapters.local.index_files import MANIFEST, PersistedIndex
from memory_engine.adapters.local.shards import Shard, TenantState
from memory_engine.adapters.local.vectors import GraphVectors, load_graph

__all__ = ["upgrade_from_format_1"]


def upgrade_from_format_1(directory: Path) -> None:
    """Re-encode every shard of a format-1 index folder and checkpoint it in the current format."""
    import numpy as np

    manifest = json.loads((directory / MANIFEST).read_bytes())
    if manifest.get("format") != 1:
        raise ValueError(f"{directory} holds format {manifest.get('format')}, not 1")
    index = PersistedIndex(directory)
    for entry in manifest["shards"]:
        tenant, key, dim = entry["tenant"], (entry["kind"], entry["thread"]), int(entry["dim"])
        data = pickle.loads((directory / entry["data"]).read_bytes())  # our own cached fixture
        vectors = data["vectors"]
        if isinstance(vectors, tuple):  # ("graph", file name, {"labels": ..., "deleted": [...]})
            _, graph_file, state = vectors
            labels: dict[str, int] = state["labels"]
            vectors = GraphVectors.restore(
                dim, index.graph, load_graph(str(directory / graph_file)), list(labels),
                np.fromiter(labels.values(), np.int64, len(labels)), np.asarray(state["deleted"], np.int64),
            )  # fmt: skip
        bm25 = data["bm25"]
        bm25._loaded, bm25._derived = False, None  # attributes format 1 did not have
        shard = Shard.__new__(Shard)
        shard.vectors, shard.bm25, shard.meta, shard.loaded = vectors, bm25, data["meta"], None
        shard.windows = None  # format 1 had no window vectors
        index.tenants.setdefault(tenant, TenantState(dim)).shards[key] = shard
        index.dirty.add((tenant, key))
    index.close()
