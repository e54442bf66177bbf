"""Fusion weights learned on the dev split: a grid over the few weights, scored by replaying fusion.

    python -m bench.locomo.tune [--data ../shared/data/locomo-dev.json]

Ingests the conversations through the engine twice (as the API does it, leftovers of each session
staying buffered, and with every turn extracted), gathers each question's evidence once through
`retrieve.gather` (the real path up to fusion), then ranks it with every point of the grid and
scores Recall@10 over categories 1–4. The objective is the mean of the two ingestions, so the
weights do not bet on how much of a thread is still buffered. Writes bench/results/locomo_tuning.json.
Only the dev split is used; the shipped defaults (retrieval/fusion.py) are the grid's best point.
"""

from __future__ import annotations

import argparse
import itertools
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
GRID = {
    "turn_dense": (0.4, 0.5, 0.6, 0.7),
    "memory_lexical": (0.0, 0.2, 0.4, 0.6),
    "memory_dense": (0.0, 0.2),
    "memory_handicap": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5),
}


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
    args = parser.parse_args(argv)
    conversations = load(args.data)
    from memory_engine.adapters.local.minilm_embedder import MiniLmEmbedder

    embedder = CachingEmbedder(MiniLmEmbedder())
    modes: dict[str, list[Case]] = {}
    for name, extract_all in (("as the API buffers", False), ("every turn extracted", True)):
        with tempfile.TemporaryDirectory(prefix="locomo-tune-") as workdir:
            engine = build_engine(Path(workdir), embedder, RetrievalConfig())
            for conversation in conversations:
                ingest(engine, conversation, extract_all, lambda: None)
            modes[name] = collect(engine, [q for c in conversations for q in c.questions])
    grid = []
    for values in itertools.product(*GRID.values()):
        weights = FusionWeights(**dict(zip(GRID, values, strict=True)))
        scores = {name: recall_10(cases, weights) for name, cases in modes.items()}
        grid.append({**asdict(weights), **scores, "mean": sum(scores.values()) / len(scores)})
    grid.sort(key=lambda row: -row["mean"])
    for row in grid[:10]:
        print(row)
    objective = "mean Recall@10 (categories 1-4) of the two ingestions"
    payload = {"objective": objective, "grid": GRID, "rows": grid}
    write_json(args.out, payload)
    return payload


if __name__ == "__main__":
    main()
