"""The forming benchmark's evidence, captured once and replayed offline (tuning while memories form).

    python -m bench.quality.locomo.forming_tune capture [--conversations N] [--out DIR]
    python -m bench.quality.locomo.forming_tune replay [--out DIR]

`capture` ingests each forming state (`forming.STATES`) of the LoCoMo dev conversations once, as
the forming benchmark does, and keeps every question's gathered candidates (`tune.Case`, the
real retrieve path up to fusion) with the memory documents' raw (cosine, BM25) and the memory
side's lexical share: one pickle per state. `replay` scores a few ways of putting the memory
documents' BM25 on the scale of every candidate's over those pickles (R@10 per state and
conversation, categories 1–4), so a candidate costs seconds, not a 20-minute benchmark run.
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.quality.locomo import forming, tune
from bench.quality.locomo.data import default_data, load
from bench.quality.locomo.engine_run import LIMIT, CachingEmbedder, build_engine, cache_name
from bench.quality.locomo.metrics import HEADLINE, recall_at
from memory_engine.retrieval import features
from memory_engine.retrieval.config import for_embedder
from memory_engine.retrieval.fusion import Weights, rank
from memory_engine.usecases import retrieve

CACHE = Path(__file__).resolve().parents[2] / ".cache"
# The split that guards against fitting the six dev conversations: choose on three, check on three.
CHOOSE_ON = ("conv-26", "conv-30", "conv-41")
CHECK_ON = ("conv-42", "conv-43", "conv-44")
POWERS = (0.0, 1.0, 1.5, 2.0, 3.0, 6.0)


@dataclass
class Captured:
    """One question's candidates, slimmed: the memory documents raw, every indexed turn
    candidate, and of the buffered turns only the best `LIMIT` (their order among themselves does
    not depend on the memory documents, so no other can reach the ranking's first `LIMIT`)."""

    question: Any
    raw_memories: list[tuple[str, float, float]]  # (memory id, cosine, raw BM25) as the index found them
    share: float  # the memory side's lexical share (`features.memory_lexical_share`), before any power
    turns: list[features.TurnCandidate]
    buffered: dict[str, str]  # kept buffered turn key -> its dialog uuid
    dialogs: dict[str, tuple[str, ...]]  # memory id -> its source dialogs
    weights: dict[str, float]  # the question's fusion weights (`RetrievalConfig.weights_for`)


class Recorder:
    """While entered, keeps what `usecases.retrieve.gather` hands the memory documents: their raw
    (id, cosine, BM25) and the memory side's lexical share before any power (1 where nothing is
    buffered), for the last question gathered."""

    def __init__(self) -> None:
        self.raw: list[tuple[str, float, float]] = []
        self.share = 1.0

    def __enter__(self) -> Recorder:
        self._saved = (retrieve.memory_candidates, retrieve.memory_lexical_share)
        make, measure = self._saved

        def candidates(found: Any, share: float = 1.0) -> list[features.MemoryCandidate]:
            self.raw = list(found)
            return make(self.raw, share)

        def lexical_share(pooled: Any, indexed: Any) -> float:
            self.share = measure(pooled, indexed)
            return self.share

        retrieve.memory_candidates = candidates
        retrieve.memory_lexical_share = lexical_share
        return self

    def __exit__(self, *_: object) -> None:
        retrieve.memory_candidates, retrieve.memory_lexical_share = self._saved

    def question(self, engine: Any, question: Any) -> Captured:
        """One question gathered through the engine, slimmed (`Captured`)."""
        self.raw, self.share = [], 1.0
        case = tune.collect(engine, [question])[0]
        return _slim(case, self.raw, self.share)


def capture(conversations: int, out: Path, only: Sequence[str] = ()) -> None:
    from memory_engine.composition.wiring import build_embedder
    from memory_engine.settings import Settings

    settings = Settings()
    chosen = load(default_data())[: conversations or None]
    embedder = CachingEmbedder(build_embedder(settings), CACHE / f"embeddings-{cache_name(settings)}.pkl")
    out.mkdir(parents=True, exist_ok=True)
    for state in [s for s in forming.STATES if not only or s.name in only]:
        with tempfile.TemporaryDirectory(prefix="forming-tune-") as workdir:
            engine = build_engine(Path(workdir), embedder, for_embedder(settings.embedder))
            for conversation in chosen:
                forming.ingest_state(engine, conversation, state.extracted(len(conversation.sessions)))
            with Recorder() as recorder:
                captured = [recorder.question(engine, q) for c in chosen for q in c.questions]
            close = getattr(engine.store, "close", None)
            if close:
                close()
        with (out / f"{_slug(state.name)}.pkl").open("wb") as file:
            pickle.dump(captured, file)
        print(f"captured {state.name}: {len(captured)} questions", flush=True)


def _slim(case: tune.Case, raw: list[tuple[str, float, float]], share: float) -> Captured:
    from memory_engine.retrieval.config import RetrievalConfig

    ev = case.gathered
    weights = dict(RetrievalConfig().weights_for(case.question.question))
    score = {
        turn.key: sum(weights[name] * value for name, value in turn.features.items())
        for turn in ev.turns
        if turn.memory_id is None
    }
    kept = set(sorted(score, key=lambda key: -score[key])[:LIMIT])
    turns = [turn for turn in ev.turns if turn.memory_id is not None or turn.key in kept]
    buffered = {key: ev.buffered[key].dialog_uuid for key in kept}
    dialogs = {key: value for key, value in case.dialogs.items() if key not in ev.buffered}
    return Captured(case.question, raw, share, turns, buffered, dialogs, weights)


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in name)


def load_states(out: Path) -> dict[str, list[Captured]]:
    states = {}
    for state in forming.STATES:
        path = out / f"{_slug(state.name)}.pkl"
        if path.exists():
            with path.open("rb") as file:
                states[state.name] = pickle.load(file)
    return states


# A way to scale the memory documents' BM25: (captured question) -> its memory candidates.
Scaler = Callable[[Captured], list[features.MemoryCandidate]]


def recall(
    states: dict[str, list[Captured]], scaler: Scaler, weights: Weights | None = None
) -> dict[str, dict[str, float]]:
    """R@10 (categories 1–4) per state and conversation ("all": every question of the state)."""
    table: dict[str, dict[str, float]] = {}
    for name, captured in states.items():
        per: dict[str, list[float]] = {}
        for item in captured:
            question = item.question
            if question.category not in HEADLINE:
                continue
            value = recall_at(_ranking(item, scaler(item), weights), question.gold_turns, 10)
            per.setdefault(question.sample_id, []).append(value)
            per.setdefault("all", []).append(value)
        table[name] = {sample: sum(v) / len(v) for sample, v in per.items()}
    return table


def _ranking(
    item: Captured, memories: list[features.MemoryCandidate], weights: Weights | None = None
) -> list[str]:
    """`tune.ranking` over the slim candidates: each unit's matched turns first, then its others."""
    out: list[str] = []
    weights = item.weights if weights is None else weights
    ranked = rank(memories, item.turns, weights)
    units = [unit for unit in ranked if unit.key in item.dialogs or unit.key in item.buffered]
    for unit in units[:LIMIT]:
        if unit.key in item.buffered:
            out.append(item.buffered[unit.key])
            continue
        sources = item.dialogs[unit.key]
        for key, _ in unit.turns:
            position = key.rsplit(":", 1)[-1]
            if position.isdigit() and int(position) < len(sources):
                out.append(sources[int(position)])
        out += sources
    return list(dict.fromkeys(out))


def _relative(item: Captured) -> dict[str, float]:
    top = max((bm25 for _, _, bm25 in item.raw_memories), default=0.0) or 1.0
    return {memory_id: bm25 / top for memory_id, _, bm25 in item.raw_memories}


def _candidates(item: Captured, lexical: dict[str, float]) -> list[features.MemoryCandidate]:
    return [
        features.MemoryCandidate(memory_id, {"memory": lexical[memory_id], "memory_dense": max(dense, 0.0)})
        for memory_id, dense, _ in item.raw_memories
    ]


def _own_turns(item: Captured) -> dict[str, float]:
    """Each memory's best turn candidate's lexical feature (on the pool's scale while forming)."""
    best: dict[str, float] = {}
    for turn in item.turns:
        if turn.memory_id:
            best[turn.memory_id] = max(best.get(turn.memory_id, 0.0), turn.features["lexical"])
    return best


def side_share(power: float = 1.0) -> Scaler:
    return lambda item: _candidates(item, {k: v * item.share**power for k, v in _relative(item).items()})


def own_share(cap: bool = False) -> Scaler:
    """Each memory document's BM25 scaled by its own best turn's share of the pool's best."""

    def scale(item: Captured) -> list[features.MemoryCandidate]:
        relative, own = _relative(item), _own_turns(item)
        out = {}
        for memory_id, value in relative.items():
            if not item.buffered:
                out[memory_id] = value * item.share
                continue
            mine = own.get(memory_id)
            if mine is None:
                mine = item.share  # none of its turns is a candidate: the side's share
            out[memory_id] = min(value * item.share, mine) if cap else value * mine
        return _candidates(item, out)

    return scale


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("capture", "replay"))
    parser.add_argument("--conversations", type=int, default=0)
    parser.add_argument("--states", type=int, nargs="*", default=[], help="indexes into forming.STATES")
    parser.add_argument("--out", type=Path, default=CACHE / "forming-tune-e5")
    args = parser.parse_args(argv)
    # The pickles name this module's classes by its import path, not `__main__`.
    from bench.quality.locomo import forming_tune as module

    if args.action == "capture":
        module.capture(args.conversations, args.out, [forming.STATES[i].name for i in args.states])
        return
    states = module.load_states(args.out)
    scalers: dict[str, Scaler] = {
        **{f"memory side's share ^ {power:g}": side_share(power) for power in POWERS},
        "each memory's own best turn's share": own_share(),
        "capped at its own best turn's share": own_share(cap=True),
    }
    for name, scaler in scalers.items():
        print(name)
        for state, row in recall(states, scaler).items():
            print(f"   {state[:36]:36} {_split(row)}")


def _split(row: dict[str, float]) -> str:
    """R@10 of all questions, and the mean of the choosing and of the checking conversations'."""
    cells = [f"all {row['all']:.3f}"]
    for label, samples in (("chosen on", CHOOSE_ON), ("checked on", CHECK_ON)):
        known = [row[sample] for sample in samples if sample in row]
        if known:
            cells.append(f"{label} {'/'.join(s[-2:] for s in samples)} {sum(known) / len(known):.3f}")
    return ", ".join(cells)


if __name__ == "__main__":
    main()
