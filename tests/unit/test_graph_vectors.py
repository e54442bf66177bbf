"""A shard's HNSW graph (`GraphVectors`, usearch in float16) beyond what the index contract sees:
replacements and removed ids coming back, a graph read from its file taking writes, the search
beam per call, and the exact scan when the graph finds too few."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_engine.adapters.local.vectors import GraphParams, GraphVectors

DIM = 16


def _rows(n: int, seed: int = 5) -> Any:
    rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _graph(n: int = 200) -> tuple[GraphVectors, Any]:
    rows = _rows(n)
    return GraphVectors.build(DIM, GraphParams(), [f"d{i}" for i in range(n)], rows), rows


def _best(graph: GraphVectors, query: Any, k: int = 1) -> list[str]:
    return [doc_id for _, doc_id in sorted(graph.top(query, k), reverse=True)]


def test_a_vector_read_back_is_the_float16_rounding_of_the_one_put() -> None:
    graph, rows = _graph()

    stored = graph.vector("d7")

    assert stored.dtype == np.float32
    assert stored.tolist() == rows[7].astype(np.float16).astype(np.float32).tolist()
    assert graph.cosines(["d7", "d8"], rows[7]) == pytest.approx([1.0, float(rows[8] @ rows[7])], abs=1e-3)


def test_putting_an_id_again_replaces_its_vector_in_place() -> None:
    # Given a graph of 200 documents
    graph, rows = _graph()

    # When d3 is put again with d150's direction
    graph.put(["d3"], rows[150:151])

    # Then it is found there, no longer at its old place, and counted once
    assert set(_best(graph, rows[150], 2)) == {"d3", "d150"}
    assert "d3" not in _best(graph, rows[3], 3)
    assert len(graph) == 200 and graph.id_of.count("d3") == 1


def test_a_removed_id_is_not_found_and_may_come_back() -> None:
    # Given a graph with d9 removed
    graph, rows = _graph()
    graph.remove("d9")
    # (a removed id is never returned, however far the search looks: no luck of the graph's)
    assert "d9" not in graph and len(graph) == 199
    assert "d9" not in _best(graph, rows[9], 199)

    # When d9 is put again, with another direction
    graph.put(["d9"], rows[20:21])

    # Then it is live again under its old key, with its new vector (read exactly, not searched:
    # which neighbours an approximate search returns may change with the build's thread timing)
    assert "d9" in graph and len(graph) == 200
    assert graph.cosines(["d9"], rows[20]) == pytest.approx([1.0], abs=1e-3)
    assert len(graph.id_of) == 200


def test_a_graph_read_from_its_file_takes_writes_and_finds_them(tmp_path: Path) -> None:
    # Given a graph with a removed document, saved and read back
    graph, rows = _graph()
    graph.remove("d4")
    graph.save(tmp_path / "shard")
    loaded = GraphVectors.load(DIM, GraphParams(), tmp_path / "shard")
    assert len(loaded) == 199 and "d4" not in loaded

    # When it takes a new document, a replacement and the removed one back
    extra = _rows(3, seed=9)
    loaded.put(["new", "d5", "d4"], extra)

    # Then each is found by its vector, and the graph holds 201 documents
    for doc_id, row in zip(["new", "d5", "d4"], extra, strict=True):
        assert _best(loaded, row) == [doc_id]
    assert len(loaded) == 201
    assert _best(loaded, rows[100]) == ["d100"]


def test_a_graph_file_of_another_dimension_is_refused(tmp_path: Path) -> None:
    graph, _ = _graph()
    graph.save(tmp_path / "shard")

    with pytest.raises(ValueError, match="nodes"):
        GraphVectors.load(DIM * 2, GraphParams(), tmp_path / "shard")


class _Recording:
    """usearch's index with a record of the search beam each search ran with."""

    def __init__(self, graph: Any) -> None:
        self.graph, self.beams = graph, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.graph, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "expansion_search":
            self.graph.expansion_search = value
        else:
            super().__setattr__(name, value)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.beams.append(self.graph.expansion_search)
        return self.graph.search(*args, **kwargs)


def test_each_search_runs_with_the_beam_of_its_own_k() -> None:
    # Given a graph whose beam is max(ef_search, ef_factor * k)
    graph, rows = _graph()
    graph.params = GraphParams(ef_search=40, ef_factor=5.0)
    recording = graph.graph = _Recording(graph.graph)

    # When it is searched for 5, then 20, then 5 candidates
    for k in (5, 20, 5):
        assert len(graph.top(rows[0], k)) == k

    # Then each search ran with its own beam
    assert recording.beams == [40, 100, 40]


class _FindsTooFew(_Recording):
    def search(self, *args: Any, **kwargs: Any) -> Any:
        found = self.graph.search(*args, **kwargs)
        return type("Matches", (), {"keys": found.keys[:1], "distances": found.distances[:1]})()


def test_when_the_graph_finds_fewer_than_k_the_live_vectors_are_scanned() -> None:
    # Given a graph that returns fewer nodes than asked (as after mass removals)
    graph, rows = _graph(50)
    for i in range(10, 50):
        graph.remove(f"d{i}")
    graph.graph = _FindsTooFew(graph.graph)

    # When 5 candidates are asked for
    found = graph.top(rows[3], 5)

    # Then the exact scan of the live documents answers, with their cosines
    exact = sorted(range(10), key=lambda i: -float(rows[i] @ rows[3]))[:5]
    found.sort(reverse=True)
    assert [doc_id for _, doc_id in found] == [f"d{i}" for i in exact]
    assert [score for score, _ in found] == pytest.approx([float(rows[i] @ rows[3]) for i in exact], abs=1e-3)
