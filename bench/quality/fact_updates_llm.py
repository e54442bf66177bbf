"""The fact-update set (bench/quality/fact_updates.py) with the LLM extractor on a local model, beside
the built-in extractor on the same conversations.

    make llm-local &    # Qwen2.5-Coder-1.5B on llama-cpp-python, port 8151
    MEMORY_ENGINE_EXTRACTOR=llm MEMORY_ENGINE_LLM_MODEL=qwen2.5-coder-1.5b \\
    MEMORY_ENGINE_LLM_STRUCTURED_OUTPUT=json_object_schema \\
    OPENAI_BASE_URL=http://127.0.0.1:8151/v1 OPENAI_API_KEY=any \\
        .venv/bin/python -m bench.quality.fact_updates_llm [--conversations moves-and-pets,trips-and-tastes]

A small model on a shared CPU takes about a minute per batch, so the run takes a few conversations
per language (both sets have the same ones) and keeps each batch's answer in bench/.cache: the
states and variants that show the model the same batch with the same current facts reuse it (the
facts' ids are random per run, so the cache keeps their positions); a remembered answer is checked
against the turns again by today's grounding, so a change there needs no new model run. The
model is told the set's language (the LoCoMo ingest path marks every session English). A batch the
model gives up on (its deadline, invalid answers) is extracted by the built-in extractor and
counted in `fell_back` (remembered too, so a second run gives the same figures without waiting for
the model again). Saved to bench/results/fact_updates_llm.json after every row.

`--replay` asks the model nothing and gives each batch the first answer the model gave it, whatever
current facts it was shown then, so a code change is scored on the same answers (saved as
bench/results/fact_updates_llm_replay.json). The recorded run's answers are committed in
bench/data/fact_updates_llm/: `--answers bench/data/fact_updates_llm` reads them instead of the
cache, so the replay (and the recorded figures, every batch remembered) runs without the model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT, print_table, save
from bench.quality import fact_updates
from bench.quality.locomo.data import load
from bench.quality.locomo.engine_run import CachingEmbedder
from bench.quality.tables import FACT_UPDATES_LLM_HEADER, fact_updates_llm_cells
from memory_engine.composition.providers.llm import LlmExtractorSettings, llm_extractor
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.extraction.grounding import ground
from memory_engine.extraction.registry import update_registry
from memory_engine.models.domain import Turn
from memory_engine.ports import Extraction, ExtractionContext, Extractor, ReadsCurrentFacts

CACHE = ROOT / "bench" / ".cache" / "fact_updates_llm"
# The answers of the recorded run, committed (the project's own conversations; a model's answers to
# them): `--answers bench/data/fact_updates_llm` replays them on a machine without the model.
RECORDED = ROOT / "bench" / "data" / "fact_updates_llm"
DEFAULT_CONVERSATIONS = ("moves-and-pets", "trips-and-tastes")
LANGUAGES = {"English": "en", "Korean": "ko"}
# Per language: batch (without the current facts shown) → the first answer the model gave it, so
# `--replay` scores today's code on the same answers as the run that first asked the model.
ANSWERED = "answered_batches.json"


class RememberedLlm:
    """The LLM extractor behind a disk cache keyed by what the model is shown (current facts by
    text and position, not id), in the set's language; the built-in extractor when it gives up."""

    def __init__(
        self, inner: Any, language: str, cache: Path, cached_only: bool = False, replay: bool = False
    ) -> None:
        self._inner = inner
        self._cached_only = cached_only or replay
        self._replay = replay
        self._language = language
        self._cache = cache
        self._fallback = BuiltinExtractor()
        self.calls = 0  # requests to the model in this run
        self.answered = 0  # batch extractions the model answered (in this run or remembered)
        self.fell_back = 0

    def current_facts_wanted(self) -> int:
        wanted: int = self._inner.current_facts_wanted()
        return wanted

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        context = context.model_copy(update={"language": self._language})
        path = self._cache / f"{_key(turns, context)}.json"
        ids = [fact.id for fact in context.current_facts]
        if self._replay:
            return self._replayed(turns, context)
        if path.exists():
            _note(turns, context, self._cache, path.name)
            self.answered += 1
            remembered = Extraction.model_validate_json(path.read_text(encoding="utf-8"))
            return _grounded(_with_ids(remembered, ids), turns, context)
        failed = path.with_suffix(".failed")
        if failed.exists() or self._cached_only:  # given up on before: the same figure, no wait
            self.fell_back += 1
            return self._fallback.extract(turns, context)
        self.calls += 1
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            extraction = self._inner.extract(turns, context)
        except Exception as error:  # the model's failure is a figure here, not a crash
            print(f"  LLM gave up on a batch ({type(error).__name__}: {error}); built-in used", flush=True)
            failed.write_text(f"{type(error).__name__}: {error}\n", encoding="utf-8")
            self.fell_back += 1
            return self._fallback.extract(turns, context)
        path.write_text(_with_positions(extraction, ids).model_dump_json(), encoding="utf-8")
        _note(turns, context, self._cache, path.name)
        self.answered += 1
        return extraction

    def _replayed(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        """The first answer the batch was given (`--replay`), else the built-in extractor's."""
        answered = _answered(turns, context, self._cache)
        if answered is None:
            self.fell_back += 1
            return self._fallback.extract(turns, context)
        self.answered += 1
        # What it marked replaced named the facts it was shown then, not these.
        metadata = {k: v for k, v in answered.metadata.items() if k != "replaces_json"}
        return _grounded(answered.model_copy(update={"metadata": metadata}), turns, context)


def _grounded(extraction: Extraction, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
    """A remembered answer checked against the turns by today's grounding (`extraction.grounding`):
    the model's words are remembered, what the engine keeps of them is the code's. Grounding an
    answer grounded before changes nothing, so a new answer is unchanged."""
    characters = json.loads(str(extraction.metadata.get("characters_json") or "{}"))
    registry = update_registry(context.known_characters, characters)
    fields, changes = ground(extraction.fields, turns, context, registry)
    metadata = {**extraction.metadata}
    for name, count in changes.items():
        metadata[f"grounding_{name}"] = int(metadata.get(f"grounding_{name}", 0)) + count
    return extraction.model_copy(update={"fields": fields, "metadata": metadata})


def _batch_key(turns: Sequence[Turn], context: ExtractionContext) -> str:
    """The batch and what the model is told of it, without the current facts it is shown."""
    shown = {
        "turns": [[turn.user_name, turn.query, turn.answer, str(turn.timestamp)] for turn in turns],
        "context": context.model_dump(mode="json", exclude={"current_facts"}),
    }
    return hashlib.sha256(json.dumps(shown, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:24]


def _note(turns: Sequence[Turn], context: ExtractionContext, cache: Path, name: str) -> None:
    """Remember the first answer the model gave a batch (ANSWERED), whatever current facts it
    showed: later runs, shown other facts, replay that one."""
    index = cache / ANSWERED
    known = json.loads(index.read_text(encoding="utf-8")) if index.exists() else {}
    if _batch_key(turns, context) in known:
        return
    known[_batch_key(turns, context)] = name
    index.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")


def _answered(turns: Sequence[Turn], context: ExtractionContext, cache: Path) -> Extraction | None:
    """The first answer a batch was given (`--replay`), if any."""
    index = cache / ANSWERED
    known = json.loads(index.read_text(encoding="utf-8")) if index.exists() else {}
    name = known.get(_batch_key(turns, context))
    if name is None or not (cache / name).exists():
        return None
    return Extraction.model_validate_json((cache / name).read_text(encoding="utf-8"))


def _key(turns: Sequence[Turn], context: ExtractionContext) -> str:
    shown = {
        "turns": [[turn.user_name, turn.query, turn.answer, str(turn.timestamp)] for turn in turns],
        "context": context.model_dump(mode="json", exclude={"current_facts"}),
        "facts": [[fact.fact, str(fact.stated_at)] for fact in context.current_facts],
    }
    return hashlib.sha256(json.dumps(shown, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:24]


def _replaces(extraction: Extraction, rename: Any) -> Extraction:
    encoded = extraction.metadata.get("replaces_json")
    if not isinstance(encoded, str) or not encoded:
        return extraction
    decoded = json.loads(encoded)
    renamed = {key: [rename(value[0]), value[1]] for key, value in decoded.items()}
    metadata = {**extraction.metadata, "replaces_json": json.dumps(renamed)}
    return extraction.model_copy(update={"metadata": metadata})


def _with_positions(extraction: Extraction, ids: list[str]) -> Extraction:
    return _replaces(extraction, lambda named: f"#{ids.index(named)}" if named in ids else named)


def _with_ids(extraction: Extraction, ids: list[str]) -> Extraction:
    def back(named: str) -> str:
        position = named[1:]
        return ids[int(position)] if named.startswith("#") and position.isdigit() else named

    return _replaces(extraction, back)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", default=",".join(DEFAULT_CONVERSATIONS))
    parser.add_argument("--variants", default="after,before", help="in the order to run them")
    parser.add_argument("--sets", default="English,Korean", help="the languages to run, in order")
    parser.add_argument(
        "--replay",
        action="store_true",
        help="ask the model nothing: each batch gets the first answer the model gave it (<answers>/"
        f"<language>/{ANSWERED}), whatever current facts it was shown then; scores a code change on the"
        " same answers",
    )
    parser.add_argument(
        "--answers",
        default=str(CACHE),
        help="the folder of the model's answers, one per language: read, and written by a run that asks "
        f"the model (default the ignored cache; the recorded run's answers: {RECORDED.relative_to(ROOT)})",
    )
    parser.add_argument(
        "--cached-only",
        action="store_true",
        help="ask the model nothing: a batch without a remembered answer counts as given up (re-recording)",
    )
    args = parser.parse_args(argv)
    from memory_engine.settings import Settings

    settings = Settings()
    wanted = set(args.conversations.split(","))
    started = time.perf_counter()
    name, inner_embedder = fact_updates._default_embedder()
    embedder = CachingEmbedder(inner_embedder, fact_updates.CACHE / f"embeddings-{name}.pkl")
    rows: list[dict[str, Any]] = []
    models: dict[str, RememberedLlm] = {}
    for variant in args.variants.split(","):
        for language, path in fact_updates.SETS:
            if language not in args.sets.split(","):
                continue
            conversations = [c for c in load(path) if c.sample_id in wanted]
            extras = fact_updates._extras(path)
            llm = models.setdefault(
                language,
                RememberedLlm(
                    llm_extractor(settings),
                    LANGUAGES[language],
                    Path(args.answers) / LANGUAGES[language],
                    args.cached_only,
                    args.replay,
                ),
            )
            assert isinstance(llm, ReadsCurrentFacts)
            extractors: tuple[tuple[str, Extractor], ...] = (("built-in", BuiltinExtractor()), ("llm", llm))
            for extractor_name, extractor in extractors:
                for state, extract_all in fact_updates.STATES:
                    asked = fact_updates._run(
                        conversations, extras, embedder, extract_all, variant == "after", extractor
                    )
                    row = {
                        "set": language,
                        "extractor": extractor_name,
                        "state": state,
                        "variant": variant,
                        **fact_updates._summary(asked),
                    }
                    rows.append(row)
                    print(f"{language} / {extractor_name} / {state} / {variant}: done", flush=True)
                    _save(rows, models, sorted(wanted), settings, started, args.replay)
            embedder.save()
    print_table(FACT_UPDATES_LLM_HEADER, [fact_updates_llm_cells(row) for row in rows])
    return {"rows": rows}


def _save(
    rows: list[dict[str, Any]],
    models: dict[str, RememberedLlm],
    wanted: list[str],
    settings: Any,
    started: float,
    replay: bool,
) -> None:
    meta = {
        "conversations": wanted,
        "questions": {row["set"]: row["questions"] for row in rows},
        "model": settings.llm_model,
        "structured_output": LlmExtractorSettings().llm_structured_output,
        "llm_calls": sum(model.calls for model in models.values()),
        "answered": sum(model.answered for model in models.values()),
        "fell_back": sum(model.fell_back for model in models.values()),
        "replayed": replay,
        "seconds": round(time.perf_counter() - started, 1),
    }
    save("fact_updates_llm_replay" if replay else "fact_updates_llm", {"rows": rows, "meta": meta})


if __name__ == "__main__":
    main()
