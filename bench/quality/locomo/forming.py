"""The forming benchmark: the same questions at several states of the same conversation.

A live thread is rarely fully extracted: its newest sessions wait in the buffer while the earlier
ones are memories. For a conversation of n sessions, state k has its first k sessions extracted
(the engine's own batching, and the client's `force_summary` on the last turn of session k, so
nothing of them stays buffered) and sessions k+1..n buffered (said with extraction off: no job is
queued for them). k = 0 is every session buffered, k = n every session extracted; between them
`STEPS` picks a few k's (every k of every conversation would ingest each conversation some 25
times). Buffered turns carry their vectors, as the worker stores them (`indexing.turn_vectors`),
so what is measured is the ranking, not the retrieve path's embedding budget.

Each state is ingested once; every variant (the default and the ablation that shows what the
fix does) asks every question of it, and a question's ranking is scored as in the LoCoMo harness.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.quality.locomo.data import Conversation
from bench.quality.locomo.engine_run import Variant, ask, build_engine, expand, hits_covering, turn_request
from bench.quality.locomo.metrics import QuestionScore, Summary, by_category, score
from bench.quality.locomo.tokens import count_tokens
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.engine import Engine
from memory_engine.ports import Embedder
from memory_engine.usecases import consolidate, turn_vectors
from memory_engine_app import local_engine

# The states between all-buffered and all-extracted, as shares of a conversation's sessions
# extracted (k = round(share × n)), and the state a live thread is in most: all but the last.
STEPS = (0.25, 0.5, 0.75)
ALL_BUFFERED = "all buffered"
ALL_EXTRACTED = "all extracted"
BUT_LAST = "all but the last session extracted"
# No state's R@10 may be more than this below the lower of the two ends (issue 41).
TOLERANCE = 0.02
DEPTH = 10


@dataclass(frozen=True)
class State:
    name: str
    extracted: Callable[[int], int]  # sessions extracted, of n


def _share(share: float) -> State:
    return State(f"first {round(100 * share)}% of sessions extracted", lambda n: round(share * n))


STATES: tuple[State, ...] = (
    State(ALL_BUFFERED, lambda n: 0),
    *(_share(share) for share in STEPS),
    State(BUT_LAST, lambda n: n - 1),
    State(ALL_EXTRACTED, lambda n: n),
)


def ingest_state(engine: Engine, conversation: Conversation, extracted: int) -> None:
    """Sessions 1..`extracted` through the engine's batching, the last of them closed with
    force_summary; the rest said with extraction off. The worker drains after each turn."""
    queue = engine.queue
    assert isinstance(queue, SqliteQueue)
    worker = local_engine.local_worker(engine, sweep=False)
    frozen = replace(
        engine, limits=replace(engine.limits, extraction_threshold=1_000_000, close_earlier_sessions=False)
    )
    for number, session in enumerate(conversation.sessions, start=1):
        live = number <= extracted
        last = len(session.turns) - 1
        for position, turn in enumerate(session.turns):
            request = turn_request(conversation, session, turn, force=live and position == last)
            consolidate.run(engine if live else frozen, "locomo", request)
            worker.drain()
    _embed_buffered(engine, conversation.sample_id)


def _embed_buffered(engine: Engine, thread: str) -> None:
    """Store the buffered turns' vectors, as an extraction job does for the turns it leaves."""
    turns = engine.store.buffered_turns_in_threads("locomo", [thread])
    turn_vectors.store(engine, turn_vectors.embedded(engine, turns))


def run(
    conversations: Sequence[Conversation],
    embedder: Embedder,
    variants: Sequence[Variant],
    progress: Callable[[int, str], Any],
) -> dict[str, dict[str, dict[str, Summary]]]:
    """Every variant's summaries per state: {variant: {state: by_category(...)}}."""
    scores: dict[str, dict[str, list[QuestionScore]]] = {
        v.name: {s.name: [] for s in STATES} for v in variants
    }
    for state in STATES:
        with tempfile.TemporaryDirectory(prefix="forming-") as workdir:
            engine = build_engine(Path(workdir), embedder, variants[0].config)
            turns = sum(len(c.turns) for c in conversations)
            with progress(turns, f"ingest [{state.name[:30]}]") as bar:
                for conversation in conversations:
                    ingest_state(engine, conversation, state.extracted(len(conversation.sessions)))
                    bar.update(len(conversation.turns))
            for variant in variants:
                engine = replace(engine, retrieval=variant.config)
                scores[variant.name][state.name] += _ask_all(engine, conversations, progress, variant.name)
            close = getattr(engine.store, "close", None)
            if close:
                close()
    return {
        variant: {state: by_category(found) for state, found in states.items()}
        for variant, states in scores.items()
    }


def _ask_all(
    engine: Engine, conversations: Sequence[Conversation], progress: Callable[[int, str], Any], name: str
) -> list[QuestionScore]:
    out: list[QuestionScore] = []
    total = sum(len(c.questions) for c in conversations)
    with progress(total, f"retrieve [{name[:26]}]") as bar:
        for conversation in conversations:
            for question in conversation.questions:
                hits = ask(engine, question)
                ranked = expand(hits)
                tokens = sum(count_tokens(hit.content) for hit in hits_covering(hits, DEPTH))
                out.append(
                    score(ranked, question.gold_turns, question.gold_sessions, question.category, tokens)
                )
                bar.update()
    return out


def check(states: dict[str, dict[str, Summary]]) -> dict[str, Any]:
    """The target: in no state is R@10 more than `TOLERANCE` below min(all buffered, all extracted)."""
    recall = {name: summaries["all"].means.get("recall_10", 0.0) for name, summaries in states.items()}
    floor = min(recall[ALL_BUFFERED], recall[ALL_EXTRACTED]) - TOLERANCE
    worst = min(recall, key=lambda name: recall[name])
    return {
        "floor_recall_10": round(floor, 4),
        "worst_state": worst,
        "worst_recall_10": round(recall[worst], 4),
        "met": all(value >= floor - 1e-9 for value in recall.values()),
    }


def record(
    systems: dict[str, dict[str, dict[str, Summary]]], variants: Sequence[Variant], default_name: str
) -> dict[str, Any]:
    """The JSON payload: per variant and state, the headline means (categories 1–4) and per category."""
    return {
        "states": [state.name for state in STATES],
        "steps": list(STEPS),
        "tolerance": TOLERANCE,
        "target": check(systems[default_name]),
        "variants": {
            v.name: {
                "own_document": v.config.own_document,
                "one_lexical_scale": v.config.one_lexical_scale,
                "memory_share_power": v.config.memory_share_power,
                "buffered_batches": v.config.buffered_batches,
            }
            for v in variants
        },
        "systems": {
            name: {
                state: {
                    category: {"questions": s.questions, **{k: round(v, 4) for k, v in s.means.items()}}
                    for category, s in summaries.items()
                }
                for state, summaries in states.items()
            }
            for name, states in systems.items()
        },
    }


def table(systems: dict[str, dict[str, dict[str, Summary]]]) -> str:
    header = ["engine", "state", "R@5", "R@10", "NDCG@10"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, states in systems.items():
        for state, summaries in states.items():
            means = summaries["all"].means
            cells = [name, state, *(f"{means.get(k, 0.0):.3f}" for k in ("recall_5", "recall_10", "ndcg_10"))]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
