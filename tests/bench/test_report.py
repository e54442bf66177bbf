"""bench.report: the docs' tables from saved results, the default embedder's columns included."""

from __future__ import annotations

from typing import Any

from bench.report import embedding, retrieve

MACHINE = {"cores": 2, "cpu": "test", "load_average_1m": 0.1}


def _embedding_result() -> dict[str, Any]:
    row = {
        "texts": "long",
        "batch": 1,
        "sentence_transformers_per_s": 32.6,
        "engine_per_s": 72.3,
        "ratio": 2.22,
        "max_abs_delta": 1.6e-7,
        "e5_per_s": 7.8,
        "e5_ratio": 0.24,
        "e5_onnx_per_s": 31.5,
        "e5_onnx_st_ratio": 0.97,
    }
    summary = {
        "geometric_mean_ratio": 2.63,
        "max_abs_delta": 3.4e-7,
        "e5_geometric_mean_ratio": 0.52,
        "e5_onnx_geometric_mean_ratio": 1.67,
        "e5_onnx_min_ratio": 0.97,
    }
    load = {"sentence_transformers_s": 3.2, "engine_onnx_s": 0.3}
    return {"machine": MACHINE, "mean_tokens": {"long": 200}, "rows": [row], "summary": summary, "load": load}


def test_the_embedding_table_shows_the_default_e5_on_onnx_beside_sentence_transformers() -> None:
    lines = embedding(_embedding_result())

    header = next(line for line in lines if line.startswith("| texts"))
    row = next(line for line in lines if line.startswith("| long"))
    assert "e5 on ONNX (default)" in header
    assert row.endswith("| 31.5 | **×0.97** |")
    assert any("e5 on ONNX (default): geometric mean ×1.67, least ×0.97" in line for line in lines)


def test_the_retrieve_report_names_the_embedder_whose_query_time_it_quotes() -> None:
    result = {
        "machine": MACHINE,
        "rows": [],
        "query_embedding": {"embedder": "OnnxE5Embedder", "p50_ms": 5.8, "p95_ms": 6.5},
        "targets": {},
    }

    assert "Query embedding, apart (OnnxE5Embedder, one query): p50 5.8 ms, p95 6.5 ms." in retrieve(result)
