"""Extraction quality on the labelled set: precision and recall per memory field.

    python -m bench.quality.extraction_quality [--extractor builtin | --extractor recorded:FILE]
                                       [--label NAME] [--record FILE] [--results FILE]

Each conversation of bench/data/extraction/ is cut into the worker's batches of 8 turns and
extracted in order, the thread's character registry carried from batch to batch as the worker
does (`update_registry`). Every memory is scored against its labels (bench/quality/extraction/score.py:
characters, keywords, intent, location, key facts), totals per language and overall.

`--extractor recorded:FILE` scores outputs recorded elsewhere (an LLM run, another branch's
extractor): FILE is `{"name": "...", "memories": {"<conversation id>/<batch>": {memory fields}}}`,
the format `--record FILE` writes. The results file keeps one column per `--label` (the built-in
extractor before and after a change, a model), so runs add up rather than overwrite each other.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import RESULTS, machine, save
from bench.quality.extraction.data import Conversation, load
from bench.quality.extraction.score import FIELDS, MemoryScore, Tally, score_all
from memory_engine.extraction.registry import update_registry
from memory_engine.models.domain import MemoryFields
from memory_engine.ports import ExtractionContext, Extractor
from memory_engine.usecases.extract import found_characters

OUT = RESULTS / "extraction_quality.json"


def extract_all(conversations: Sequence[Conversation], extractor: Extractor) -> dict[str, MemoryFields]:
    """Every memory of the set from `extractor`, batch after batch, the registry carried along."""
    produced: dict[str, MemoryFields] = {}
    for conversation in conversations:
        registry: dict[str, list[str]] = {}
        for memory_id, batch in zip(conversation.memory_ids(), conversation.batches(), strict=True):
            context = ExtractionContext(
                user_name=conversation.user_name, language=conversation.language, known_characters=registry
            )
            extraction = extractor.extract(batch, context)
            produced[memory_id] = extraction.fields
            found = found_characters(extraction.fields, extraction.metadata)
            registry = update_registry(registry, found) if found else registry
    return produced


def recorded(path: Path) -> tuple[str, dict[str, MemoryFields]]:
    """A recorded run: its name and its memories' fields by memory id."""
    data = json.loads(path.read_text(encoding="utf-8"))
    memories = {key: MemoryFields.model_validate(value) for key, value in data["memories"].items()}
    return str(data.get("name") or path.stem), memories


def column(totals: dict[str, dict[str, Tally]]) -> dict[str, dict[str, dict[str, float | int]]]:
    return {
        group: {name: tally.as_dict() for name, tally in fields.items()} for group, fields in totals.items()
    }


def table(columns: dict[str, dict[str, Any]], group: str = "all") -> str:
    """Markdown: one row per field, precision / recall per column."""
    names = list(columns)
    lines = ["| field | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for name in FIELDS:
        cells = []
        for label in names:
            tally = columns[label]["scores"].get(group, {}).get(name)
            cells.append(f"{tally['precision']:.2f} / {tally['recall']:.2f}" if tally else "")
        lines.append(f"| {name} (P / R) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def _misses(scores: list[MemoryScore]) -> dict[str, dict[str, dict[str, list[str]]]]:
    return {s.memory_id: {"wrong": s.wrong, "missed": s.missed} for s in scores}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _parser().parse_args(argv)
    conversations = load()
    if args.extractor == "builtin":
        from memory_engine.extraction.builtin import BuiltinExtractor

        name, produced = "built-in", extract_all(conversations, BuiltinExtractor())
    elif args.extractor.startswith("recorded:"):
        name, produced = recorded(Path(args.extractor.removeprefix("recorded:")))
    else:
        raise SystemExit(f"--extractor {args.extractor!r}: use builtin or recorded:FILE")
    label = args.label or name
    if args.record:
        memories = {key: fields.model_dump() for key, fields in produced.items()}
        Path(args.record).write_text(
            json.dumps({"name": label, "memories": memories}, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    totals, scores = score_all(conversations, produced)
    results_path = Path(args.results)
    results: dict[str, Any] = (
        json.loads(results_path.read_text(encoding="utf-8")) if results_path.exists() else {}
    )
    columns: dict[str, Any] = results.get("columns", {})
    columns[label] = {
        "extractor": args.extractor,
        "commit": _commit(),
        "machine": machine(),
        "memories": len(scores),
        "scores": column(totals),
        "per_memory": _misses(scores),
    }
    results = {
        "benchmark": "extraction_quality",
        "set": "bench/data/extraction: 3 English and 3 Korean conversations of 24 turns (18 memories, the dev"
        " split the changes were made on) and 2 held-out ones (6 memories, written after them)",
        "columns": columns,
    }
    save("extraction_quality", results, results_path)
    for group in ("all", "en", "ko", "held-out"):
        print(f"\n{group}:\n{table(columns, group)}")
    return results


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--extractor", default="builtin", help="builtin, or recorded:FILE")
    parser.add_argument("--label", help="the results column's name (default: the extractor's)")
    parser.add_argument("--record", help="also write the produced memories to this file")
    parser.add_argument("--results", default=str(OUT), help="the results file (columns are merged)")
    return parser


if __name__ == "__main__":
    main()
