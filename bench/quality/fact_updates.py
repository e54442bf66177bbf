"""Facts that change over sessions: does retrieve give the current value first, and still find the old one?

    python -m bench.quality.fact_updates [--quiet]

The set (bench/data/fact_updates, English and Korean, the same conversations) has people who move,
change jobs, break up, lose and adopt pets, cancel trips, change tastes, buy cars and heal, over
four sessions each; its questions ask for the current value ("Where does Mina live now?"), the
earlier one ("Where did Mina live before she moved?") and when it changed. Each conversation goes
through the engine's real path as in the LoCoMo harness (bench/quality/locomo/engine_run.py:
consolidate every turn, the worker drains, the built-in extractor, the shipped embedder behind the
cache), in two states a user meets: sessions closed by the next one's first turn with the last
session still buffered (the default), and every session extracted (`force_summary` at its end).

Per kind of question: Recall@5 and @10 of the gold turns in the ranking (a hit stands for its
turns, as in the LoCoMo protocol), and for current-value questions the "latest first" rate: the
turn stating the current value ranks above every turn stating a value it replaced (absent counts
as below). "before" is the same engine with the thread's supersession at write turned off and no
buffered turn read as replacing a memory, so retrieve orders hits as it did before facts had a
life; "after" is the engine as shipped. Saved to bench/results/fact_updates.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from bench.common import print_table, save
from bench.quality.locomo.data import Conversation, Question, load
from bench.quality.locomo.engine_run import CachingEmbedder, ask, build_engine, cache_name, expand, ingest
from bench.quality.locomo.metrics import recall_at
from bench.quality.tables import FACT_UPDATES_HEADER, fact_updates_cells
from memory_engine.ports import Embedder, Extractor
from memory_engine.retrieval.config import RetrievalConfig
from memory_engine.usecases import retrieve_time, supersede

DATA = Path(__file__).resolve().parents[1] / "data" / "fact_updates"
CACHE = Path(__file__).resolve().parents[1] / ".cache"
SETS = (("English", DATA / "english.json"), ("Korean", DATA / "korean.json"))
KINDS = ("current", "earlier", "when")
STATES = (("last session buffered", False), ("every session extracted", True))


@dataclass(frozen=True)
class Asked:
    kind: str
    gold: tuple[str, ...]
    replaced: tuple[str, ...]
    ranked: tuple[str, ...]

    def latest_first(self) -> bool:
        """The current value's turn ranks above every turn of a value it replaced."""
        position = {dia_id: i for i, dia_id in enumerate(self.ranked)}
        best = min((position[g] for g in self.gold if g in position), default=None)
        return best is not None and all(position.get(old, len(self.ranked)) > best for old in self.replaced)


def main(argv: Sequence[str] | None = None, embedder: Embedder | None = None) -> dict[str, Any]:
    args = _parser().parse_args(argv)
    started = time.perf_counter()
    if embedder is None:
        name, inner = _default_embedder()
        cached = CachingEmbedder(inner, CACHE / f"embeddings-{name}.pkl")
    else:
        name, cached = type(embedder).__name__, CachingEmbedder(embedder)
    rows: list[dict[str, Any]] = []
    for language, path in SETS:
        conversations = load(path)
        extras = _extras(path)
        for state, extract_all in STATES:
            for variant in ("before", "after"):
                asked = _run(conversations, extras, cached, extract_all, supersession=variant == "after")
                rows.append({"set": language, "state": state, "variant": variant, **_summary(asked)})
                if not args.quiet:
                    print(f"{language} / {state} / {variant}: done", flush=True)
        cached.save()
    print_table(FACT_UPDATES_HEADER, [fact_updates_cells(row) for row in rows])
    meta = {
        "questions": {language: sum(len(c.questions) for c in load(path)) for language, path in SETS},
        "embedder": name,
        "seconds": round(time.perf_counter() - started, 1),
    }
    save("fact_updates", {"rows": rows, "meta": meta})
    return {"rows": rows}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true")
    return parser


def _default_embedder() -> tuple[str, Embedder]:
    from memory_engine.composition.wiring import build_embedder
    from memory_engine.settings import Settings

    settings = Settings()
    return cache_name(settings), build_embedder(settings)


def _extras(path: Path) -> dict[tuple[str, int], tuple[str, tuple[str, ...]]]:
    """Each question's kind and the turns stating the values its answer replaced."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {
        (sample["sample_id"], index): (qa["kind"], tuple(qa.get("replaced", [])))
        for sample in raw
        for index, qa in enumerate(sample["qa"])
    }


@contextmanager
def _supersession(on: bool) -> Iterator[None]:
    if on:
        yield
        return
    with (
        mock.patch.object(supersede, "supersede", lambda engine, memory: []),
        mock.patch.object(retrieve_time, "_buffered_statements", lambda found, topics, as_of: {}),
    ):
        yield


def _run(
    conversations: Sequence[Conversation],
    extras: dict[tuple[str, int], tuple[str, tuple[str, ...]]],
    embedder: Embedder,
    extract_all: bool,
    supersession: bool,
    extractor: Extractor | None = None,
) -> list[Asked]:
    asked: list[Asked] = []
    with tempfile.TemporaryDirectory(prefix="fact-updates-") as workdir, _supersession(supersession):
        engine = build_engine(Path(workdir), embedder, RetrievalConfig(), extractor)
        for conversation in conversations:
            ingest(engine, conversation, extract_all, lambda: None)
        for conversation in conversations:
            for question in conversation.questions:
                asked.append(_asked(engine, question, extras))
        close = getattr(engine.store, "close", None)
        if close:
            close()
    return asked


def _asked(
    engine: Any, question: Question, extras: dict[tuple[str, int], tuple[str, tuple[str, ...]]]
) -> Asked:
    kind, replaced = extras[question.sample_id, question.qa_index]
    ranked = tuple(expand(ask(engine, question)))
    return Asked(kind, question.gold_turns, replaced, ranked)


def _summary(asked: Sequence[Asked]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(asked)}
    for kind in KINDS:
        of_kind = [a for a in asked if a.kind == kind]
        out[kind] = {
            "questions": len(of_kind),
            "recall_5": _mean(recall_at(a.ranked, a.gold, 5) for a in of_kind),
            "recall_10": _mean(recall_at(a.ranked, a.gold, 10) for a in of_kind),
        }
    out["recall_5"] = _mean(recall_at(a.ranked, a.gold, 5) for a in asked)
    out["recall_10"] = _mean(recall_at(a.ranked, a.gold, 10) for a in asked)
    current = [a for a in asked if a.kind == "current"]
    out["latest_first"] = _mean(1.0 if a.latest_first() else 0.0 for a in current)
    return out


def _mean(values: Iterator[float] | Sequence[float]) -> float:
    items = list(values)
    return round(sum(items) / len(items), 3) if items else 0.0


if __name__ == "__main__":
    main()
