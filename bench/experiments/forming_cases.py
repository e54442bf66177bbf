"""Gather the forming benchmark's evidence once per state, to replay fusion over it.

    python -m bench.experiments.forming_cases --out DIR [--data FILE] [--only conv-26 conv-30]

For each state of bench/quality/locomo/forming.py, every conversation is ingested in that state
and each question's evidence gathered through `retrieve.gather` (as `bench.quality.locomo.tune`
does for the drained state); the cases are pickled per state to DIR/<state index>.pkl, so ranking
changes can be scored on every state without ingesting again (`bench.experiments.forming_replay`).
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.quality.locomo import forming
from bench.quality.locomo.data import default_data, load
from bench.quality.locomo.engine_run import CachingEmbedder, build_engine, cache_name
from bench.quality.locomo.tune import collect
from memory_engine.retrieval.config import RetrievalConfig

CACHE = Path(__file__).resolve().parents[1] / ".cache"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data())
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="*", default=None, help="sample ids to keep")
    args = parser.parse_args(argv)
    from memory_engine.composition.wiring import build_embedder
    from memory_engine.settings import Settings

    settings = Settings()
    conversations = [c for c in load(args.data) if not args.only or c.sample_id in args.only]
    embedder = CachingEmbedder(build_embedder(settings), CACHE / f"embeddings-{cache_name(settings)}.pkl")
    args.out.mkdir(parents=True, exist_ok=True)
    for at, state in enumerate(forming.STATES):
        with tempfile.TemporaryDirectory(prefix="forming-cases-") as workdir:
            engine = build_engine(Path(workdir), embedder, RetrievalConfig())
            for conversation in conversations:
                forming.ingest_state(engine, conversation, state.extracted(len(conversation.sessions)))
            cases = collect(engine, [q for c in conversations for q in c.questions])
        with (args.out / f"{at}.pkl").open("wb") as out:
            pickle.dump((state.name, cases), out)
        print(f"{state.name}: {len(cases)} cases", flush=True)
    embedder.save()


if __name__ == "__main__":
    main()
