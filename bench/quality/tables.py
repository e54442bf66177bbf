"""The quality benchmarks' own tables for docs/performance.md (`python -m bench.report` writes the page)."""

from __future__ import annotations

from typing import Any

from bench.quality.extraction_quality import table as extraction_table
from bench.quality.llm_rows import report as llm_report
from bench.quality.locomo.report import COLUMNS
from bench.render import cell, provenance, table


def retrieval(result: dict[str, Any]) -> list[str]:
    """LoCoMo-format retrieval: every system and ablation of the run, categories 1–4."""
    lines = [
        f"{result['data']}: {len(result['conversations'])} conversations, {result['turns']:,} turns, "
        f"{result['questions']:,} questions; {result['headline']}. Tokens@10: {result['tokens']}.",
        "",
    ]
    header = ["retriever", *(label for _, label in COLUMNS), "tokens@10"]
    rows = []
    for name, categories in result["systems"].items():
        headline = categories["all"]
        rows.append([name, *(f"{headline.get(key, 0.0):.3f}" for key, _ in COLUMNS), headline.get("tokens")])
    return lines + table(header, rows)


def forming(result: dict[str, Any]) -> list[str]:
    """The forming benchmark: per state of extraction, the default engine (and the rows it is
    compared with), categories 1–4; then whether the target held."""
    target = result["target"]
    held = "held" if target["met"] else "not held"
    embedder = result.get("embedder", "e5")
    lines = [
        f"{result['data']}: {len(result['conversations'])} conversations, {result['turns']:,} turns, "
        f"{result['questions']:,} questions; {result['headline']}; embedder `{embedder}`.",
        "",
    ]
    header = ["engine", "state", "R@5", "R@10", "NDCG@10"]
    rows = []
    for name, states in result["systems"].items():
        for state in result["states"]:
            means = states[state]["all"]
            rows.append(
                [name, state, *(f"{means.get(k, 0.0):.3f}" for k in ("recall_5", "recall_10", "ndcg_10"))]
            )
    lines += table(header, rows)
    lines += [
        "",
        f"Target (no state's R@10 more than {result['tolerance']} below the lower of all buffered and all "
        f"extracted, i.e. under {target['floor_recall_10']:.3f}): **{held}**; the lowest state is "
        f"{target['worst_state']} at {target['worst_recall_10']:.3f}.",
    ]
    return lines


def extraction(result: dict[str, Any]) -> list[str]:
    columns = result["columns"]
    made = "; ".join(
        f"{label}: commit {column['commit']}, {column['memories']} memories, {provenance(column)}"
        for label, column in columns.items()
    )
    return [
        f"{result['set']}. Precision / recall per field ({made}).",
        "",
        "All conversations:",
        "",
        extraction_table(columns, "all"),
        "",
        "The held-out pair (written after the changes, not tuned on):",
        "",
        extraction_table(columns, "held-out"),
    ]


def llm_extraction(result: dict[str, Any]) -> list[str]:
    return llm_report(result)


def _four(value: float | None) -> str:
    """An objective to four places: the folds differ in the third."""
    return "—" if value is None else f"{value:.4f}"


def tuning(result: dict[str, Any]) -> list[str]:
    """The fusion weights chosen on the dev split, and how each held-out conversation fared."""
    cv = result["cross_validation"]
    folds = [
        [fold["held_out"], _four(fold["objective"]), _four(fold.get("shipped_default")), cell(fold["chosen"])]
        for fold in cv["folds"]
    ]
    count = len(folds)
    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
    others = "the other one" if count == 2 else f"the other {words.get(count - 1, count - 1)}"
    every = "both" if count == 2 else f"all {words.get(count, count)}"
    return [
        f"Objective: {result['objective']} (noise {result['noise']}). Chosen on {every} "
        f"conversations: {cell(result['chosen'])}.",
        "",
        *table(
            ["held-out conversation", "objective", "shipped default's", f"weights chosen on {others}"], folds
        ),
        "",
        "; ".join(f"{key.replace('_', ' ')}: {cell(value)}" for key, value in cv.items() if key != "folds")
        + ".",
    ]


CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}


def _scope(row: dict[str, Any]) -> str:
    """How much of LoCoMo dev a row's quality ran on (`--quick N`: its first N conversations)."""
    quick = row.get("quick") or 0
    return f"first {quick}" if quick else "all 6"


def embedders(result: dict[str, Any]) -> list[str]:
    """e5 against EmbeddingGemma: what each retrieves (the engine's default ranking) and costs."""
    rows = result["rows"]
    lines = [
        "Quality: the engine's default ranking on LoCoMo dev (each row says on how many of its six "
        "conversations: the first two, or all), the Korean set and its English translation (Recall@10, "
        "categories 1–4; LoCoMo's per category too), and the embedder alone over turns (the harness's "
        "dense baseline run on that embedder). Costs on this machine (2 shared cores: each row's load "
        "average beside it): query embedding p50/p95 (one question per call), passages per second "
        "(batches of 32 LoCoMo lines), a fresh process's first query vector (graphs already written; "
        "writing them is once per machine), its peak resident memory after 64 passages, size on disk, "
        "and `retrieve` p95 at 10k memories on the speed fixture's data of that vector length, the "
        "question embedded by the model in every call.",
        "",
    ]
    header = [
        "embedder",
        "LoCoMo conversations",
        "LoCoMo R@10",
        "R@5",
        "NDCG@10",
        *(f"{name} R@10" for name in CATEGORIES.values()),
        "embedder alone R@10",
        "Korean R@10",
        "Korean set (en) R@10",
    ]
    body = []
    for row in rows:
        quality = row.get("quality", {})
        locomo = quality.get("locomo_dev", {})
        engine = locomo.get("engine", {})
        alone: dict[str, Any] = next(
            (v for k, v in locomo.get("rows", {}).items() if "over turns (cosine)" in k), {}
        )

        def r10(key: str, quality: dict[str, Any] = quality) -> Any:
            return quality.get(key, {}).get("engine", {}).get("all", {}).get("recall_10")

        body.append(
            [
                row["name"],
                _scope(row) if locomo else None,
                engine.get("all", {}).get("recall_10"),
                engine.get("all", {}).get("recall_5"),
                engine.get("all", {}).get("ndcg_10"),
                *(engine.get(category, {}).get("recall_10") for category in CATEGORIES),
                alone.get("recall_10"),
                r10("korean"),
                r10("korean_english"),
            ]
        )
    lines += table(header, body)
    lines += ["", "Costs:", ""]
    header = [
        "embedder",
        "dim",
        "query p50 / p95 ms",
        "passages/s",
        "first vector s",
        "graphs written s",
        "peak RSS MB",
        "retrieve p95 at 10k ms",
        "weights MB",
        "graph MB",
        "load 1m",
        "commit",
    ]
    body = [
        [
            row["name"],
            row["dimension"],
            f"{row['query_ms_p50']:.0f} / {row['query_ms_p95']:.0f}",
            row["passages_per_s"],
            row["first_vector_s"],
            row["graphs_written_s"],
            row["peak_rss_mb"],
            row.get("retrieve_10k_ms_p95"),
            row["weights_mb"],
            row["graph_mb"],
            row.get("load_average_1m"),
            row.get("commit", ""),
        ]
        for row in rows
    ]
    return lines + table(header, body)


# The fact-updates benchmark's columns, printed by the run and rendered on the performance page.
FACT_UPDATES_HEADER = [
    "set",
    "state",
    "variant",
    "current R@5",
    "earlier R@5",
    "when R@5",
    "R@10 (all)",
    "latest first",
]


FACT_UPDATES_LLM_HEADER = [FACT_UPDATES_HEADER[0], "extractor", *FACT_UPDATES_HEADER[1:]]


def fact_updates_cells(row: dict[str, Any]) -> list[Any]:
    """One row of the fact-update table: set, state, variant, Recall@5 per kind, Recall@10, latest first."""
    return [
        row["set"],
        row["state"],
        row["variant"],
        row["current"]["recall_5"],
        row["earlier"]["recall_5"],
        row["when"]["recall_5"],
        row["recall_10"],
        row["latest_first"],
    ]


def fact_updates_llm_cells(row: dict[str, Any]) -> list[Any]:
    set_name, *rest = fact_updates_cells(row)
    return [set_name, row["extractor"], *rest]


def fact_updates_llm(result: dict[str, Any]) -> list[str]:
    """The fact-update set per extractor (built-in, the LLM one on a local model), same conversations."""
    meta = result["meta"]
    counts = ", ".join(f"{language} {count}" for language, count in meta["questions"].items())
    about = (
        f"Conversations: {', '.join(meta['conversations'])}; questions per language: {counts};"
        f" model: {meta['model']} ({meta['structured_output']}); of the LLM rows' batch extractions,"
        f" {meta.get('answered', meta['llm_calls'])} answered by the model and {meta['fell_back']} given up"
        " (its deadline) and extracted by the built-in extractor."
    )
    if meta.get("replayed"):
        about += (
            " Answers replayed: each batch got the first answer the model gave it, whatever current facts"
            " it was shown then; no model ran."
        )
    rows = [fact_updates_llm_cells(row) for row in result["rows"]]
    return [about, "", *table(FACT_UPDATES_LLM_HEADER, rows)]


def fact_updates(result: dict[str, Any]) -> list[str]:
    """Per set, state and variant: Recall@5 per kind of question, Recall@10 over all, latest first."""
    header = FACT_UPDATES_HEADER
    rows = [fact_updates_cells(row) for row in result["rows"]]
    counts = ", ".join(f"{language} {count}" for language, count in result["meta"]["questions"].items())
    return [f"Questions: {counts}; embedder: {result['meta']['embedder']}.", "", *table(header, rows)]
