"""LoCoMo evidence retrieval: the engine's real path against BM25 and MiniLM over turns.

    python -m bench.quality.locomo_retrieval [--data ../shared/data/locomo-dev.json] [--out RUN.jsonl]

Implements the protocol of docs/evaluation.md: every turn is consolidated through the engine
(see bench/quality/locomo/engine_run.py), every question retrieved with limit 50, each hit expanded to its
source turns in order. Prints and saves (bench/results/locomo_retrieval.json) Recall@5, Recall@10,
NDCG@10, MRR and session Recall@5 over categories 1–4 and per category (5 apart), with the tokens
of `content` a caller reads to see the first 10 ranked turns; the baselines and the ablation
variants (bench/quality/locomo/variants.py) are scored in the same run, and Recall@k for k = 1…50 is drawn
to bench/results/locomo_retrieval.png. The data stays in ../shared/data (licence CC BY-NC 4.0).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.quality.locomo.baselines import Bm25Turns, DenseTurns, TurnFusion
from bench.quality.locomo.data import Conversation, default_data, load
from bench.quality.locomo.engine_run import (
    CachingEmbedder,
    Variant,
    ask,
    build_engine,
    cache_name,
    expand,
    hits_covering,
    ingest,
)
from bench.quality.locomo.metrics import QuestionScore, Summary, by_category, score
from bench.quality.locomo.plot import draw
from bench.quality.locomo.report import record, table, write_json, write_run
from bench.quality.locomo.tokens import BUDGETS, count_tokens, tokenizer_name, within_budget
from bench.quality.locomo.variants import DEFAULT_NAME, build, forming_variants, ingestion_key
from memory_engine.ports import Embedder
from memory_engine.retrieval.config import for_embedder

RESULTS = Path(__file__).resolve().parents[1] / "results"
CACHE = Path(__file__).resolve().parents[1] / ".cache"
BM25_NAME = "BM25 over turns (k1 1.5, b 0.75)"
DENSE_NAME = "MiniLM over turns (cosine)"
FUSION_NAME = "turn-level fusion (issue #14: BM25 turn + window, MiniLM; 0.25/0.25/0.5)"
DEPTH = 10  # the tokens column: what a caller reads to see this many ranked turns
Ranked = dict[tuple[str, int], list[str]]


def main(argv: Sequence[str] | None = None, embedder: Embedder | None = None) -> dict[str, Any]:
    args = _parser().parse_args(argv)
    # Before torch (the MiniLM baseline) loads libgomp: OpenMP threads that spin at barriers starve
    # the e5 engine on a busy 2-core machine (the e5 adapter sets the same, too late once torch ran).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if args.embedder:
        os.environ["MEMORY_ENGINE_EMBEDDER"] = args.embedder  # read by Settings(), the engine's default
    conversations = load(args.data)
    if args.conversations:
        conversations = conversations[: args.conversations]
    if args.forming:
        return _forming(args, conversations, embedder)
    # The engine runs with the shipped default embedder; the baselines with MiniLM, as in the data
    # README's figures. Both behind a cache kept on disk between runs (not with a test's embedder).
    if embedder is None:
        name, default = _default_embedder()
        cached = CachingEmbedder(default, CACHE / f"embeddings-{name}.pkl")
        baseline = cached if name == "minilm" else CachingEmbedder(_minilm(), CACHE / "embeddings-minilm.pkl")
    else:
        cached = baseline = CachingEmbedder(embedder)
    every = build(for_embedder(_profile(args)))
    variants = every if args.ablations else every[:1]
    if args.shared_only:  # the rows that need no ingestion of their own
        variants = tuple(v for v in variants if ingestion_key(v) == ingestion_key(every[0]))
    started = time.perf_counter()

    scores: dict[str, list[QuestionScore]] = {}
    scores[BM25_NAME], scores[DENSE_NAME], scores[FUSION_NAME] = _baselines(
        conversations, baseline, args.quiet
    )
    baseline.save()
    runs: dict[str, Ranked] = {}
    for group in _groups(variants):
        with tempfile.TemporaryDirectory(prefix="locomo-") as workdir:
            first = group[0]
            engine = build_engine(
                Path(workdir),
                cached,
                first.config,
                close_sessions=first.close_sessions,
                batch_size=first.batch_size,
            )
            _ingest_all(engine, conversations, group[0], args.quiet)
            for variant in group:
                engine = replace(engine, retrieval=variant.config)
                scores[variant.name], runs[variant.name] = _retrieve_all(
                    engine, conversations, variant, args.quiet
                )
            close = getattr(engine.store, "close", None)
            if close:
                close()
        cached.save()

    others = [v.name for v in variants if v.name != DEFAULT_NAME]
    order = [DEFAULT_NAME, BM25_NAME, DENSE_NAME, FUSION_NAME, *others]
    systems = {name: by_category(scores[name]) for name in order}
    print(table(systems))
    _check_goal(systems)
    meta = _meta(args, conversations, time.perf_counter() - started)
    write_json(args.results, record(systems, meta, {v.name: _describe(v) for v in variants}))
    if args.out:
        rows = [(key[0], key[1], ranked) for key, ranked in runs[DEFAULT_NAME].items()]
        write_run(args.out, rows)
    if args.plot:
        draw(args.plot, systems, [DEFAULT_NAME, BM25_NAME, DENSE_NAME], _title(args.data, conversations))
    print(f"wrote {args.results}" + (f" and {args.plot}" if args.plot else ""), file=sys.stderr)
    return {"systems": systems, "runs": runs}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data(), help="a file in LoCoMo's format")
    parser.add_argument(
        "--profile",
        default=None,
        help="rank with this embedder's retrieval profile (default: the configured embedder's)",
    )
    parser.add_argument("--out", type=Path, default=None, help="per-question rankings of the default engine")
    parser.add_argument("--results", type=Path, default=RESULTS / "locomo_retrieval.json")
    parser.add_argument("--plot", type=Path, default=RESULTS / "locomo_retrieval.png")
    parser.add_argument("--no-plot", dest="plot", action="store_const", const=None)
    parser.add_argument("--no-ablations", dest="ablations", action="store_false", help="default engine only")
    parser.add_argument(
        "--shared-ingestion-only",
        dest="shared_only",
        action="store_true",
        help="only the ablations that share the default's ingestion (one ingestion in all)",
    )
    parser.add_argument(
        "--forming",
        action="store_true",
        help="the forming benchmark: the questions at several states of extraction (locomo/forming.py)",
    )
    parser.add_argument(
        "--embedder",
        default="",
        help="the engine's embedder (MEMORY_ENGINE_EMBEDDER; default: the shipped one)",
    )
    parser.add_argument("--conversations", type=int, default=0, help="only the first N (quick looks)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def _forming(
    args: argparse.Namespace, conversations: Sequence[Conversation], embedder: Embedder | None
) -> dict[str, Any]:
    """The forming benchmark (bench/quality/locomo/forming.py): the default engine and the ranking
    before a buffered turn had its own document features, at each state, in one run."""
    from bench.quality.locomo import forming

    name = _default_embedder()[0] if embedder is None else "given"
    cached = CachingEmbedder(
        embedder or _default_embedder()[1], None if embedder else CACHE / f"embeddings-{name}.pkl"
    )
    started = time.perf_counter()
    variants = forming_variants(build(for_embedder(_profile(args))))
    systems = forming.run(
        conversations, cached, variants, lambda total, desc: _progress(total, desc, args.quiet)
    )
    cached.save()
    print(forming.table(systems))
    payload = forming.record(systems, variants, DEFAULT_NAME)
    print(f"\ntarget (no state's R@10 below {payload['target']['floor_recall_10']}): {payload['target']}")
    meta = _meta(args, conversations, time.perf_counter() - started)
    meta.update(benchmark=args.results.stem, embedder=name)
    results = (
        args.results
        if args.results != RESULTS / "locomo_retrieval.json"
        else RESULTS / "forming_retrieval.json"
    )
    write_json(results, {**meta, **payload})
    return {"systems": systems}


def _profile(args: argparse.Namespace) -> str:
    """Whose retrieval profile the engine ranks with (`retrieval.config.PROFILES`): --profile, else
    the configured embedder's (MEMORY_ENGINE_EMBEDDER, set by --embedder)."""
    return str(args.profile or os.environ.get("MEMORY_ENGINE_EMBEDDER") or "e5")


def _minilm() -> Embedder:
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder("minilm")


def _default_embedder() -> tuple[str, Embedder]:
    """The embedder the engine ships with (MEMORY_ENGINE_EMBEDDER picks another), and its name."""
    from memory_engine.composition.wiring import build_embedder
    from memory_engine.settings import Settings

    settings = Settings()
    return cache_name(settings), build_embedder(settings)


def _progress(total: int, desc: str, quiet: bool) -> Any:
    from tqdm import tqdm

    unit = " questions" if "retrieve" in desc else " turns"
    return tqdm(total=total, desc=desc, unit=unit, disable=quiet, leave=False)


def _groups(variants: Sequence[Variant]) -> list[list[Variant]]:
    groups: dict[tuple[bool | int, ...], list[Variant]] = {}
    for variant in variants:
        groups.setdefault(ingestion_key(variant), []).append(variant)
    return list(groups.values())


def _baselines(
    conversations: Sequence[Conversation], embedder: Embedder, quiet: bool
) -> tuple[list[QuestionScore], list[QuestionScore], list[QuestionScore]]:
    """The turn-level retrievers; a turn's content is its line, packed into budgets whole."""
    bm25: list[QuestionScore] = []
    dense: list[QuestionScore] = []
    fusion: list[QuestionScore] = []
    total = sum(len(c.questions) for c in conversations)
    with _progress(total, "baselines: retrieve", quiet) as bar:
        for conversation in conversations:
            lines = {turn.dia_id: turn.line() for turn in conversation.turns}
            retrievers: tuple[Bm25Turns | DenseTurns | TurnFusion, ...] = (
                Bm25Turns(conversation),
                DenseTurns(conversation, embedder),
                TurnFusion(conversation, embedder),
            )
            for question in conversation.questions:
                for retriever, out in zip(retrievers, (bm25, dense, fusion), strict=True):
                    ranked = retriever.rank(question)
                    tokens = sum(count_tokens(lines[dia_id]) for dia_id in ranked[:DEPTH])
                    within = [within_budget(ranked, lines, budget) for budget in BUDGETS]
                    out.append(_score(ranked, question, tokens, within))
                bar.update()
    return bm25, dense, fusion


def _ingest_all(engine: Any, conversations: Sequence[Conversation], variant: Variant, quiet: bool) -> None:
    total = sum(len(c.turns) for c in conversations)
    with _progress(total, f"ingest [{variant.name[:28]}]", quiet) as bar:
        for conversation in conversations:
            ingest(engine, conversation, variant.extract_all, bar.update)


def _retrieve_all(
    engine: Any, conversations: Sequence[Conversation], variant: Variant, quiet: bool
) -> tuple[list[QuestionScore], Ranked]:
    scores: list[QuestionScore] = []
    ranked_by_question: Ranked = {}
    total = sum(len(c.questions) for c in conversations)
    with _progress(total, f"retrieve [{variant.name[:26]}]", quiet) as bar:
        for conversation in conversations:
            for question in conversation.questions:
                hits = ask(engine, question)
                ranked = expand(hits, variant.evidence_order)
                tokens = sum(count_tokens(hit.content) for hit in hits_covering(hits, DEPTH))
                within = [expand(ask(engine, question, max_tokens=budget)) for budget in BUDGETS]
                scores.append(_score(ranked, question, tokens, within))
                ranked_by_question[question.sample_id, question.qa_index] = ranked
                bar.update()
    return scores, ranked_by_question


def _score(
    ranked: list[str], question: Any, tokens: int, within: Sequence[Sequence[str]] = ((), ())
) -> QuestionScore:
    return score(ranked, question.gold_turns, question.gold_sessions, question.category, tokens, within)


def _check_goal(systems: dict[str, dict[str, Summary]]) -> None:
    engine = systems[DEFAULT_NAME]["all"].means.get("recall_10", 0.0)
    bm25 = systems[BM25_NAME]["all"].means.get("recall_10", 0.0)
    gap = 100 * (engine - bm25)
    print(f"\nRecall@10, categories 1–4: engine {engine:.3f} vs BM25 {bm25:.3f} ({gap:+.1f} points)")


def _describe(variant: Variant) -> dict[str, Any]:
    flags = {
        "extract_all": variant.extract_all,
        "close_sessions": variant.close_sessions,
        "batch_size": variant.batch_size,
    }
    return {**flags, **asdict(variant.config)}


def _title(data: Path, conversations: Sequence[Conversation]) -> str:
    questions = sum(len(c.questions) for c in conversations)
    return f"LoCoMo evidence Recall@k: {data.name}, {len(conversations)} conversations, {questions} questions"


def _meta(args: argparse.Namespace, conversations: Sequence[Conversation], seconds: float) -> dict[str, Any]:
    return {
        "benchmark": "locomo_retrieval",
        "data": args.data.name,
        "conversations": [c.sample_id for c in conversations],
        "profile": _profile(args),  # whose retrieval profile the engine ranked with
        "turns": sum(len(c.turns) for c in conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "headline": "mean over questions of categories 1-4; category 5 reported apart",
        "tokens": f"tokens of `content` of the hits covering the first {DEPTH} turns ({tokenizer_name()})",
        "budgets": f"recall_500t / recall_1000t: turns returned with options.max_tokens {list(BUDGETS)}",
        "seconds": round(seconds, 1),
        "machine": f"{platform.machine()}, {_cores()} cores (shared), Python {platform.python_version()}",
        "recorded": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


if __name__ == "__main__":
    main()
