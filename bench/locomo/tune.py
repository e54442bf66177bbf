"""Fusion weights learned on the dev split: a grid over the few weights, scored by replaying fusion.

    python -m bench.locomo.tune [--data ../shared/data/locomo-dev.json]

Ingests the conversations through the engine once, as the harness does by default (no client
flag; the engine closes each session when the next one starts, so only the last session of each
conversation keeps raw buffered turns), gathers each question's evidence once through
`retrieve.gather` (the real path up to fusion), then replays fusion over it and scores Recall@10
over categories 1–4. Two stages:

1. turn_dense, memory_lexical, memory_dense, turn_date with no handicap. Points within NOISE of the
   best are ties, and the simplest tie wins: no memory cosine, then the smallest date bonus, then
   the smallest memory_lexical;
2. memory_handicap with those weights: it only decides how memories compete with raw buffered
   turns. Ties go to the largest handicap, the one that keeps raw turns competitive where more of
   them stay buffered (a deployment that turns `close_earlier_sessions` off).

Writes bench/results/locomo_tuning.json. Only the dev split is used; the shipped defaults
(retrieval/fusion.py) are the two stages' choices. `--cases FILE` keeps the gathered evidence
(pickle) so the grids can be replayed without ingesting again.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.locomo.data import Question, default_data, load
from bench.locomo.engine_run import LIMIT, TENANT, CachingEmbedder, build_engine, ingest
from bench.locomo.metrics import HEADLINE, recall_at
from bench.locomo.report import write_json
from memory_engine.engine import Engine
from memory_engine.models.api import RetrieveOptions, RetrieveRequest, UserInput
from memory_engine.retrieval.config import RetrievalConfig
from memory_engine.retrieval.fusion import FusionWeights, fuse
from memory_engine.usecases.retrieve import Evidence, gather

RESULTS = Path(__file__).resolve().parents[1] / "results" / "locomo_tuning.json"
STAGE_1 = {
    "turn_dense": (0.5, 0.6, 0.7, 0.8, 0.9),
    "memory_lexical": (0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.5, 2.0),
    "memory_dense": (0.0, 0.1, 0.2),
    "turn_date": (0.0, 0.1, 0.2, 0.3, 0.5),
}
HANDICAPS = tuple(round(0.1 * i, 1) for i in range(26))
NOISE = 0.002  # differences of Recall@10 smaller than this are ties (about 2 of 933 questions)


@dataclass
class Case:
    question: Question
    evidence: Evidence
    dialogs: dict[str, tuple[str, ...]]  # ranking key -> the dialogs it stands for, in order


def collect(engine: Engine, questions: Sequence[Question]) -> list[Case]:
    cases = []
    for question in questions:
        request = RetrieveRequest(
            parent_session_uuids=[question.sample_id],
            user_input=UserInput(query=question.question),
            options=RetrieveOptions(limit=LIMIT),
        )
        evidence = gather(engine, TENANT, request)
        dialogs: dict[str, tuple[str, ...]] = {key: (t.dialog_uuid,) for key, t in evidence.buffered.items()}
        for memory_id in evidence.memory_ids:
            memory = engine.store.get_memory(TENANT, memory_id)
            if memory is not None:
                dialogs[memory_id] = tuple(memory.source_dialog_uuids)
        cases.append(Case(question, evidence, dialogs))
    return cases


def recall_10(cases: Sequence[Case], weights: FusionWeights) -> float:
    total = 0.0
    counted = 0
    for case in cases:
        if case.question.category not in HEADLINE:
            continue
        ev = case.evidence
        ranked = fuse(ev.memories, ev.turns, weights, ev.memory_ids)
        units = [key for key, _ in ranked if key in case.dialogs][:LIMIT]
        turns = list(dict.fromkeys(dialog for key in units for dialog in case.dialogs[key]))
        total += recall_at(turns, case.question.gold_turns, 10)
        counted += 1
    return total / max(counted, 1)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data())
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--cases", type=Path, default=None, help="pickle of gathered evidence (reused)")
    args = parser.parse_args(argv)
    cases = _cases(args)

    stage_1 = []
    for values in itertools.product(*STAGE_1.values()):
        weights = FusionWeights(**dict(zip(STAGE_1, values, strict=True)), memory_handicap=0.0)
        stage_1.append({**asdict(weights), "recall_10": recall_10(cases, weights)})
    top = max(row["recall_10"] for row in stage_1)
    ties = [row for row in stage_1 if row["recall_10"] >= top - NOISE]
    simplest = ("memory_dense", "turn_date", "memory_lexical")
    chosen = min(ties, key=lambda row: (*(row[name] for name in simplest), -row["recall_10"]))
    base = FusionWeights(**{name: chosen[name] for name in STAGE_1})

    stage_2 = []
    for handicap in HANDICAPS:
        weights = FusionWeights(**{**asdict(base), "memory_handicap": handicap})
        stage_2.append({"memory_handicap": handicap, "recall_10": recall_10(cases, weights)})
    top = max(row["recall_10"] for row in stage_2)
    tied = [row for row in stage_2 if row["recall_10"] >= top - NOISE]
    best = max(tied, key=lambda row: row["memory_handicap"])
    final = FusionWeights(**{**asdict(base), "memory_handicap": best["memory_handicap"]})
    print(f"stage 1: {chosen}")
    print(f"stage 2: {best}")
    print(f"chosen: {final}")
    payload = {
        "objective": "Recall@10 over categories 1-4 of the dev split",
        "noise": NOISE,
        "chosen": asdict(final),
        "stage_1": sorted(stage_1, key=lambda row: -row["recall_10"]),
        "stage_2": stage_2,
    }
    write_json(args.out, payload)
    return payload


def _cases(args: argparse.Namespace) -> list[Case]:
    if args.cases and args.cases.exists():
        with args.cases.open("rb") as cached:
            loaded: list[Case] = pickle.load(cached)
            return loaded
    from memory_engine.adapters.local.minilm_embedder import MiniLmEmbedder

    conversations = load(args.data)
    embedder = CachingEmbedder(MiniLmEmbedder())
    with tempfile.TemporaryDirectory(prefix="locomo-tune-") as workdir:
        engine = build_engine(Path(workdir), embedder, RetrievalConfig())
        for conversation in conversations:
            ingest(engine, conversation, False, lambda: None)
        cases = collect(engine, [q for c in conversations for q in c.questions])
    if args.cases:
        with args.cases.open("wb") as out:
            pickle.dump(cases, out)
    return cases


if __name__ == "__main__":
    main()
