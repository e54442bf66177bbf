"""Which memory share power keeps an embedder's forming states above the floor? Captured once, replayed.

    MEMORY_ENGINE_EMBEDDING_MODEL_DIR=... python -m bench.experiments.forming_power capture \\
        --embedder gemma --samples conv-26 conv-30 conv-41 --out bench/.cache/forming-tune-gemma/train
    python -m bench.experiments.forming_power replay \\
        --out bench/.cache/forming-tune-gemma/train bench/.cache/forming-tune-gemma/held-out \\
        [--powers 1 2 3 4 6] [--vary memory_dense --values 0.25 0.15]

`bench.quality.locomo.forming_tune` captures the forming benchmark's candidates of the shipped
embedder and replays the memory documents' BM25 scalings over them. This runs the same capture
(its `Recorder`, its pickles) with another embedder (`--embedder`, MEMORY_ENGINE_EMBEDDER as the
benchmark's option; EmbeddingGemma's vectors come from the harness's cache, the model only for a
text not in it) and on chosen conversations (`--samples`), and replays captures of disjoint
conversations together (one `--out` per folder; each conversation is its own thread). The replay
adds what choosing a setting needs: a grid of powers, a second knob (one feature's weight,
`--vary`, the memory document's BM25 by default), and the target per split, judged as
`forming.check` judges a recorded run: the worst state against the lower of all buffered and all
extracted minus 0.02.

It lives outside bench/quality/locomo/ because that folder is code the recorded quality results
measure (bench/measured.py): an option added there would mark them all stale. Printed, not saved
(docs/research/forming.md).
"""

from __future__ import annotations

import argparse
import os
import pickle
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.quality.locomo import forming, forming_tune
from bench.quality.locomo.data import default_data, load
from bench.quality.locomo.engine_run import CachingEmbedder, build_engine, cache_name
from memory_engine.retrieval.config import DEFAULT_WEIGHTS, RetrievalConfig, for_embedder
from memory_engine.retrieval.fusion import Weights

CACHE = forming_tune.CACHE
POWERS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
# The splits of `forming_tune`: choose on the first three dev conversations, check on the other three.
SPLITS = (("all", ("all",)), ("chosen on", forming_tune.CHOOSE_ON), ("checked on", forming_tune.CHECK_ON))


def capture(out: Path, samples: Sequence[str] = (), states: Sequence[str] = ()) -> None:
    """`forming_tune.capture` for the configured embedder, on the conversations `samples` names
    (all if empty) and the states `states` names (all if empty); the embedding cache is saved
    after each state, so a vector the model had to make is kept even if a later state fails."""
    from memory_engine.composition.wiring import build_embedder
    from memory_engine.settings import Settings

    settings = Settings()
    config = for_embedder(settings.embedder)
    # forming_tune keeps the shipped default's weights with each question (its `_slim`): right for
    # every embedder without weights of its own in PROFILES, wrong for one with them.
    if dict(config.weights) != dict(RetrievalConfig().weights):
        raise SystemExit(
            f"{settings.embedder}'s profile has weights of its own: forming_tune would replay others"
        )
    chosen = choose(load(default_data()), samples)
    embedder = CachingEmbedder(build_embedder(settings), CACHE / f"embeddings-{cache_name(settings)}.pkl")
    out.mkdir(parents=True, exist_ok=True)
    for state in [s for s in forming.STATES if not states or s.name in states]:
        with tempfile.TemporaryDirectory(prefix="forming-power-") as workdir:
            engine = build_engine(Path(workdir), embedder, config)
            for conversation in chosen:
                forming.ingest_state(engine, conversation, state.extracted(len(conversation.sessions)))
            with forming_tune.Recorder() as recorder:
                captured = [recorder.question(engine, q) for c in chosen for q in c.questions]
            close = getattr(engine.store, "close", None)
            if close:
                close()
        embedder.save()
        with (out / f"{forming_tune._slug(state.name)}.pkl").open("wb") as file:
            pickle.dump(captured, file)
        print(f"captured {state.name}: {len(captured)} questions", flush=True)


def choose(conversations: Sequence[Any], samples: Sequence[str]) -> list[Any]:
    """The conversations whose sample ids `samples` names, in that order (all if empty)."""
    if not samples:
        return list(conversations)
    known = {c.sample_id: c for c in conversations}
    unknown = [sample for sample in samples if sample not in known]
    if unknown:
        raise SystemExit(f"--samples: no conversation {', '.join(unknown)} (known: {', '.join(known)})")
    return [known[sample] for sample in samples]


def load_states(*outs: Path) -> dict[str, list[forming_tune.Captured]]:
    """Each state's captured questions, joined over the folders (captures of disjoint
    conversations). A state missing from any folder is left out, so that every state replayed
    asks the same questions."""
    states: dict[str, list[forming_tune.Captured]] = {}
    for state in forming.STATES:
        paths = [out / f"{forming_tune._slug(state.name)}.pkl" for out in outs]
        if not all(path.exists() for path in paths):
            continue
        states[state.name] = []
        for path in paths:
            with path.open("rb") as file:
                states[state.name] += pickle.load(file)
    return states


def verdict(table: dict[str, dict[str, float]]) -> list[str]:
    """Per split (every question; the mean of the choosing and of the checking conversations),
    the worst state against the floor, where both ends were captured for it."""
    if forming.ALL_BUFFERED not in table or forming.ALL_EXTRACTED not in table:
        return []
    lines = []
    for label, samples in SPLITS:
        means = {state: _mean(row, samples) for state, row in table.items()}
        known = {state: value for state, value in means.items() if value is not None}
        if len(known) < len(means):
            continue
        floor = min(known[forming.ALL_BUFFERED], known[forming.ALL_EXTRACTED]) - forming.TOLERANCE
        worst = min(known, key=lambda state: known[state])
        met = "met" if known[worst] >= floor - 1e-9 else "MISSED"
        lines.append(f"{label}: worst {known[worst]:.3f} ({worst}) against floor {floor:.3f}: {met}")
    return lines


def _mean(row: dict[str, float], samples: Sequence[str]) -> float | None:
    known = [row[sample] for sample in samples if sample in row]
    return sum(known) / len(known) if known else None


def with_weight(name: str, value: float) -> Weights:
    """The shipped weights with one feature's weight set to `value` (the replay's second knob)."""
    if name not in DEFAULT_WEIGHTS:
        raise SystemExit(f"--vary: no feature {name!r} (features: {', '.join(DEFAULT_WEIGHTS)})")
    return {**DEFAULT_WEIGHTS, name: value}


def replay(outs: Sequence[Path], powers: Sequence[float], vary: str, values: Sequence[float]) -> None:
    """R@10 per state and split for each (weight, power), and the target's verdict."""
    states = load_states(*outs)
    for value in values or [DEFAULT_WEIGHTS[vary]]:
        weights = with_weight(vary, value)
        for power in powers:
            table = forming_tune.recall(states, forming_tune.side_share(power), weights)
            print(f"memory side's share ^ {power:g}, {vary} weight {value:g}")
            for state, row in table.items():
                print(f"   {state[:36]:36} {forming_tune._split(row)}")
            for line in verdict(table):
                print(f"   {line}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("capture", "replay"))
    parser.add_argument("--embedder", default="", help="MEMORY_ENGINE_EMBEDDER for the capture")
    parser.add_argument("--samples", nargs="*", default=[], help="capture only these (e.g. conv-26 conv-30)")
    parser.add_argument("--states", type=int, nargs="*", default=[], help="indexes into forming.STATES")
    parser.add_argument(
        "--out", type=Path, nargs="+", required=True, help="capture folder(s); replay joins several"
    )
    parser.add_argument("--powers", type=float, nargs="*", default=list(POWERS))
    parser.add_argument("--vary", default="memory", help="the feature whose weight --values sets")
    parser.add_argument("--values", type=float, nargs="*", default=[], help="its weights (default: shipped)")
    args = parser.parse_args(argv)
    if args.embedder:
        os.environ["MEMORY_ENGINE_EMBEDDER"] = args.embedder  # read by Settings(), as the benchmark does
    if args.action == "capture":
        if len(args.out) != 1:
            parser.error("capture writes one --out folder")
        capture(args.out[0], args.samples, [forming.STATES[i].name for i in args.states])
        return
    replay(args.out, args.powers, args.vary, args.values)


if __name__ == "__main__":
    main()
