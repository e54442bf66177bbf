"""Why the LLM extractor's current value is not first (issue 45): the fact-update set through the
engine with the LLM's remembered answers (bench/.cache/fact_updates_llm, no model run), and for each
memory written what supersession reads of it.

    python -m bench.experiments.fact_updates_llm_diagnosis [--sets English] [--state buffered|extracted]

Prints, per memory: the extractor, its key facts, the statements supersession finds in them
(`supersede.statements`: slot and character), what the extractor named as replaced
(`replaces_json`) and which of its key facts ended up marked replaced; then, per current-value
question, where the current turn and the turns it replaced rank.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.quality import fact_updates
from bench.quality.fact_updates_llm import CACHE, LANGUAGES, RememberedLlm
from bench.quality.locomo.data import load
from bench.quality.locomo.engine_run import CachingEmbedder, ask, build_engine, expand, ingest
from memory_engine.composition.providers.llm import llm_extractor
from memory_engine.models.domain import Memory
from memory_engine.retrieval.config import RetrievalConfig
from memory_engine.usecases.supersede import statements


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="English")
    parser.add_argument("--conversations", default="moves-and-pets,trips-and-tastes")
    parser.add_argument("--state", choices=("buffered", "extracted"), default="extracted")
    args = parser.parse_args(argv)
    from memory_engine.settings import Settings

    settings = Settings()
    name, inner = fact_updates._default_embedder()
    embedder = CachingEmbedder(inner, fact_updates.CACHE / f"embeddings-{name}.pkl")
    for language, path in fact_updates.SETS:
        if language not in args.sets.split(","):
            continue
        code = LANGUAGES[language]
        llm = RememberedLlm(llm_extractor(settings), code, CACHE / code, cached_only=True)
        conversations = [c for c in load(path) if c.sample_id in args.conversations.split(",")]
        extras = fact_updates._extras(path)
        with tempfile.TemporaryDirectory(prefix="fact-diagnosis-") as workdir:
            engine = build_engine(Path(workdir), embedder, RetrievalConfig(), llm)
            for conversation in conversations:
                ingest(engine, conversation, args.state == "extracted", lambda: None)
            for conversation in conversations:
                print(f"\n=== {language} {conversation.sample_id}")
                for memory in _thread(engine, conversation.sample_id):
                    _describe(memory)
                for question in conversation.questions:
                    kind, replaced = extras[question.sample_id, question.qa_index]
                    if kind != "current":
                        continue
                    ranked = expand(ask(engine, question))
                    place = {turn: ranked.index(turn) for turn in ranked}
                    print(
                        f"  Q {question.question!r}: current {[place.get(g) for g in question.gold_turns]}"
                        f" replaced {[place.get(r) for r in replaced]}"
                    )
            close = getattr(engine.store, "close", None)
            if close:
                close()
        print(f"(answered {llm.answered}, fell back {llm.fell_back})")
    embedder.save()


def _thread(engine: Any, thread: str) -> list[Memory]:
    return sorted(
        (m for m in engine.store.iter_memories() if m.parent_session_uuid == thread),
        key=lambda m: m.stated_at,
    )


def _describe(memory: Memory) -> None:
    extractor = memory.metadata.get("extractor", "builtin")
    turns = list(memory.source_dialog_uuids)
    print(f"- {memory.memory_id[-6:]} {memory.stated_at:%Y-%m-%d} {extractor} turns={turns}")
    for index, fact in enumerate(memory.fields.key_facts):
        print(f"    fact {index}: {fact}")
    print(f"    statements: {[(s.slot, s.subject, s.index) for s in statements(memory)]}")
    print(f"    replaces_json: {memory.metadata.get('replaces_json')}")
    marked = [(f.index, f.slot, (f.superseded_by or "")[-6:]) for f in memory.life.key_facts]
    print(f"    marked replaced: {marked}")


if __name__ == "__main__":
    main()
