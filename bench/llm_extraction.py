"""LLM extraction through a real model: validity, bounds, language, grounding, characters, tokens
and seconds per batch, on the project's own conversations (bench/data/llm_extraction/, Korean and
English, characters labelled) and a fixed sample of LoCoMo dev batches.

    make llm-local &    # Qwen2.5-Coder-1.5B on llama-cpp-python, port 8151
    MEMORY_ENGINE_EXTRACTOR=llm MEMORY_ENGINE_LLM_MODEL=qwen2.5-coder-1.5b \\
    OPENAI_BASE_URL=http://127.0.0.1:8151/v1 OPENAI_API_KEY=any \\
        .venv/bin/python -m bench.llm_extraction [--record tests/llm/recorded] [--only ko-pets,locomo]

The extractor is built by `wiring.build_llm_extractor` from the same settings the engine reads,
so the run takes exactly the path a user's Ollama, vLLM or llama.cpp server takes. Each batch
gets the characters of the conversation's earlier batches as known characters, as a thread's
registry gives them. Every response the server sends is recorded on the way (an httpx hook):
`--record DIR` writes the raw answers to the own conversations' batches as test fixtures
(tests/llm/recorded/); LoCoMo's are never written (CC BY-NC). Saves
bench/results/llm_extraction.json (or --out).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import llm_quality
from bench.common import RESULTS, ROOT, locomo_path, print_table, save
from memory_engine.extraction.registry import update_registry
from memory_engine.extraction.schema import MemoryOut
from memory_engine.models.domain import Turn
from memory_engine.ports import ExtractionContext

OWN = ROOT / "bench" / "data" / "llm_extraction" / "conversations.json"
CACHE = ROOT / "bench" / ".cache" / "llm_extraction"
BATCH_SIZE = 8
# (sample_id, session, first turn): four batches of eight LoCoMo dev turns from four conversations.
LOCOMO_SAMPLE = (("conv-26", 2, 0), ("conv-30", 3, 0), ("conv-41", 2, 8), ("conv-43", 4, 0))


@dataclass
class Batch:
    """One extraction: its turns, context, and what the people in it are (when labelled)."""

    id: str
    source: str  # "own" or "locomo"
    conversation: str
    turns: list[Turn]
    language: str
    user_name: str
    expected: dict[str, list[str]] = field(default_factory=dict)
    optional: list[str] = field(default_factory=list)
    speakers: list[str] = field(default_factory=list)


def _turn(conversation: str, seq: int, speaker: str, query: str, answer: str, at: datetime) -> Turn:
    moment = at.astimezone(UTC)
    return Turn(
        tenant="bench",
        session_uuid=conversation,
        dialog_uuid=f"{conversation}-{seq}",
        seq=seq,
        query=query,
        answer=answer,
        user_name=speaker,
        npc_id=None,  # as the API stores a reply without `npc_id`: the prompt calls it "assistant"
        timestamp=moment,
        created_at=moment,
    )


def own_batches(path: Path = OWN) -> list[Batch]:
    """The own conversations cut into batches of BATCH_SIZE turns, in order."""
    batches = []
    for item in json.loads(path.read_text(encoding="utf-8"))["conversations"]:
        turns = [
            _turn(
                item["id"],
                seq,
                item["user_name"],
                t["query"],
                t["answer"],
                datetime.fromisoformat(t["timestamp"]),
            )
            for seq, t in enumerate(item["turns"])
        ]
        for number, start in enumerate(range(0, len(turns), BATCH_SIZE), start=1):
            batches.append(
                Batch(
                    id=f"{item['id']}#{number}",
                    source="own",
                    conversation=item["id"],
                    turns=turns[start : start + BATCH_SIZE],
                    language=item["language"],
                    user_name=item["user_name"],
                    expected=item["characters"],
                    optional=item.get("optional", []),
                    speakers=[item["user_name"]],
                )
            )
    return batches


def locomo_batches(path: Path | None) -> list[Batch]:
    """LOCOMO_SAMPLE's batches, one LoCoMo line = one turn as the retrieval protocol ingests them."""
    if path is None:
        return []
    from bench.locomo.data import load

    conversations = {conversation.sample_id: conversation for conversation in load(path)}
    batches = []
    for sample_id, session_number, start in LOCOMO_SAMPLE:
        session = next(s for s in conversations[sample_id].sessions if s.number == session_number)
        lines = session.turns[start : start + BATCH_SIZE]
        turns = [
            _turn(sample_id, start + offset, line.speaker, line.said(), "", session.date)
            for offset, line in enumerate(lines)
        ]
        batches.append(
            Batch(
                id=f"{sample_id}:S{session_number}+{start}",
                source="locomo",
                conversation=sample_id,
                turns=turns,
                language="en",
                user_name=lines[0].speaker,
                speakers=sorted({line.speaker for line in lines}),
            )
        )
    return batches


def in_run_order(batches: Sequence[Batch]) -> list[Batch]:
    """Every conversation's first batch, then half the LoCoMo sample, then the rest: a run cut
    short on a slow machine has measured both languages and both sources. A conversation's
    batches keep their order (each takes the characters of those before it)."""
    firsts = [b for b in batches if b.source == "own" and b.id.endswith("#1")]
    locomo = [b for b in batches if b.source == "locomo"]
    later = [b for b in batches if b.source == "own" and b not in firsts]
    half = (len(locomo) + 1) // 2
    return [*firsts, *locomo[:half], *later, *locomo[half:]]


class Recorder:
    """Every chat-completions exchange, through an httpx response hook."""

    def __init__(self) -> None:
        self.exchanges: list[dict[str, Any]] = []

    def hook(self, response: Any) -> None:
        if not response.request.url.path.endswith("/chat/completions"):
            return
        response.read()
        request = json.loads(response.request.content or b"{}")
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        self.exchanges.append(
            {
                "mode": _mode(request.get("response_format")),
                "messages": len(request.get("messages", [])),
                "temperature": request.get("temperature"),
                "max_tokens": request.get("max_tokens"),
                "status": response.status_code,
                "body": body,
            }
        )

    def client(self) -> Any:
        """The openai package's own HTTP client class (httpx's, whatever its version) with the hook."""
        import openai

        return openai.DefaultHttpxClient(event_hooks={"response": [self.hook]})


def _mode(response_format: Any) -> str:
    if not isinstance(response_format, dict):
        return "text"
    kind = str(response_format.get("type"))
    return "json_object_schema" if kind == "json_object" and "schema" in response_format else kind


def _answers(exchanges: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The 200 answers' choices (content and finish reason), in order."""
    out = []
    for exchange in exchanges:
        body = exchange["body"]
        if exchange["status"] == 200 and isinstance(body, dict) and body.get("choices"):
            choice = body["choices"][0]
            out.append(
                {"content": choice["message"].get("content") or "", "finish": choice.get("finish_reason")}
            )
    return out


def measure(
    batch: Batch, extract: Callable[[Batch, ExtractionContext], Any], known: dict[str, list[str]]
) -> dict[str, Any]:
    """One batch through `extract`: the row of the results table (`exchanges` kept for recording)."""
    context = ExtractionContext(user_name=batch.user_name, language=batch.language, known_characters=known)
    started = time.monotonic()
    extraction, error = None, None
    try:
        extraction = extract(batch, context)
    except Exception as failure:  # the benchmark reports a given-up batch, and goes on
        error = failure
    seconds = time.monotonic() - started
    return {"batch": batch, "context": context, "extraction": extraction, "error": error, "seconds": seconds}


def row_of(batch: Batch, outcome: dict[str, Any], exchanges: Sequence[dict[str, Any]]) -> dict[str, Any]:
    answers = _answers(exchanges)
    extraction, error = outcome["extraction"], outcome["error"]
    usage = [
        exchange["body"].get("usage") or {} for exchange in exchanges if isinstance(exchange["body"], dict)
    ]
    row: dict[str, Any] = {
        "batch": batch.id,
        "source": batch.source,
        "language": batch.language,
        "turns": len(batch.turns),
        "requests": len(exchanges),
        "answers": len(answers),
        "refused_modes": sorted({e["mode"] for e in exchanges if e["status"] >= 400}),
        "finish_reasons": [answer["finish"] for answer in answers],
        "seconds": round(outcome["seconds"], 1),
        "prompt_tokens": sum(int(u.get("prompt_tokens") or 0) for u in usage),
        "completion_tokens": sum(int(u.get("completion_tokens") or 0) for u in usage),
    }
    if extraction is None:
        return {**row, "outcome": "given_up", "error": f"{type(error).__name__}: {error}"[:400]}
    row["outcome"] = "first_try" if len(answers) == 1 else "after_repair"
    row["structured_output"] = extraction.metadata.get("structured_output")
    fields = extraction.fields
    out = MemoryOut.model_validate_json(answers[-1]["content"])
    row["limits"] = llm_quality.limits(out)
    if batch.language == "ko":
        row["hangul_share"] = llm_quality.hangul_share(fields.summary)
    row["grounding"] = llm_quality.grounding(
        fields.key_facts, fields.key_dialogue, [t.text() for t in batch.turns]
    )
    found = json.loads(str(extraction.metadata["characters_json"]))
    if batch.expected:
        row["characters"] = llm_quality.characters(found, batch.expected, batch.optional)
    else:
        # LoCoMo: the speakers are known; the people they name are not labelled.
        row["characters"] = llm_quality.characters(found, {speaker: [] for speaker in batch.speakers}, ())
        row["characters"]["extra"] = []
    return row


def totals(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    valid = [row for row in rows if row["outcome"] != "given_up"]
    korean = [row["hangul_share"] for row in valid if row.get("hangul_share") is not None]
    grounding = [row["grounding"] for row in valid]
    people = [row["characters"] for row in valid]

    def share(part: float, whole: float) -> float | None:
        return round(part / whole, 3) if whole else None

    return {
        "batches": len(rows),
        "first_try": sum(row["outcome"] == "first_try" for row in rows),
        "after_repair": sum(row["outcome"] == "after_repair" for row in rows),
        "given_up": sum(row["outcome"] == "given_up" for row in rows),
        "within_limits": sum(row["limits"]["within"] for row in valid),
        "no_empty_field": sum(not row["limits"]["empty"] for row in valid),
        "hangul_share_min": round(min(korean), 3) if korean else None,
        "hangul_share_mean": round(statistics.mean(korean), 3) if korean else None,
        "facts_grounded": share(
            sum(g["facts_grounded"] for g in grounding), sum(g["facts"] for g in grounding)
        ),
        "quotes_grounded": share(
            sum(g["quotes_grounded"] for g in grounding), sum(g["quotes"] for g in grounding)
        ),
        "characters_recall": share(sum(p["matched"] for p in people), sum(p["expected"] for p in people)),
        "characters_extra": sum(len(p["extra"]) for p in people),
        "characters_split": sum(len(p["split"]) for p in people),
        "characters_conflated": sum(len(p["conflated"]) for p in people),
        "prompt_tokens_median": statistics.median(row["prompt_tokens"] for row in rows) if rows else None,
        "completion_tokens_median": statistics.median(row["completion_tokens"] for row in rows)
        if rows
        else None,
        "completion_tokens_max": max((row["completion_tokens"] for row in rows), default=None),
        "seconds_median": round(statistics.median(row["seconds"] for row in rows), 1) if rows else None,
        "seconds_total": round(sum(row["seconds"] for row in rows), 1),
    }


def record(
    directory: Path,
    batch: Batch,
    context: ExtractionContext,
    exchanges: Sequence[dict[str, Any]],
    seconds: float | None = None,
) -> Path:
    """The batch, the server's raw responses and the batch's seconds: a test fixture for the own
    conversations (tests/llm/recorded/), a rescoring copy for LoCoMo's (the ignored cache)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{batch.id.replace('#', '-')}.json"
    fixture = {
        "batch": batch.id,
        "language": batch.language,
        "user_name": batch.user_name,
        "known_characters": dict(context.known_characters),
        "turns": [
            {
                "query": t.query,
                "answer": t.answer,
                "user_name": t.user_name,
                "timestamp": t.timestamp.isoformat(),
            }
            for t in batch.turns
        ],
        "seconds": None if seconds is None else round(seconds, 1),
        "exchanges": list(exchanges),
    }
    path.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


def _print(rows: Sequence[dict[str, Any]]) -> None:
    print_table(
        [
            "batch",
            "outcome",
            "req",
            "s",
            "prompt",
            "completion",
            "limits",
            "hangul",
            "facts ok",
            "quotes ok",
            "people",
        ],
        [
            [
                row["batch"],
                row["outcome"],
                row["requests"],
                row["seconds"],
                row["prompt_tokens"],
                row["completion_tokens"],
                "ok" if row.get("limits", {}).get("within") else "-",
                row.get("hangul_share") if row.get("hangul_share") is not None else "",
                f"{row['grounding']['facts_grounded']}/{row['grounding']['facts']}"
                if "grounding" in row
                else "",
                f"{row['grounding']['quotes_grounded']}/{row['grounding']['quotes']}"
                if "grounding" in row
                else "",
                f"{row['characters']['matched']}/{row['characters']['expected']}"
                if "characters" in row
                else "",
            ]
            for row in rows
        ],
    )
    print(json.dumps(totals(rows), indent=1, ensure_ascii=False))


def _save(
    settings: Any, data: Path | None, args: argparse.Namespace, rows: Sequence[dict[str, Any]], quiet: bool
) -> None:
    payload = {
        "model": settings.llm_model,
        "structured_output": settings.llm_structured_output,
        "max_output_tokens": settings.llm_max_output_tokens,
        "timeout_seconds": settings.llm_timeout_seconds,
        "locomo": data.name if data else None,
        "locomo_sample": [list(item) for item in LOCOMO_SAMPLE[: args.locomo]] if data else [],
        "totals": totals(rows),
        "rows": list(rows),
    }
    if quiet:
        with contextlib.redirect_stdout(io.StringIO()):
            save("llm_extraction", payload, args.out)
    else:
        save("llm_extraction", payload, args.out)


def report(result: dict[str, Any]) -> list[str]:
    """docs/configuration.md's table of a saved run (`--report`): one row per batch, then the totals."""
    machine = result["machine"]
    lines = [
        f"`{result['model']}`, structured output `{result['structured_output']}` as configured; "
        f"{machine['cores']} cores ({machine['cpu']}), 1-min load {machine['load_average_1m']} at the end.",
        "",
        "| batch | answer | requests | s | prompt / completion tokens | within limits | Hangul in summary "
        "| facts grounded | quotes grounded | people found |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        grounding, people = row.get("grounding"), row.get("characters")
        hangul = row.get("hangul_share")
        facts = f"{grounding['facts_grounded']}/{grounding['facts']}" if grounding else ""
        quotes = f"{grounding['quotes_grounded']}/{grounding['quotes']}" if grounding else ""
        found = f"{people['matched']}/{people['expected']}" if people else ""
        within = "yes" if row.get("limits", {}).get("within") else "no"
        lines.append(
            f"| {row['batch']} | {row['outcome'].replace('_', ' ')} | {row['requests']} "
            f"| {row['seconds']:,.0f} | {row['prompt_tokens']:,} / {row['completion_tokens']:,} | {within} "
            f"| {'' if hangul is None else f'{hangul:.0%}'} | {facts} | {quotes} | {found} |"
        )
    t = result["totals"]
    lines += [
        "",
        f"In all: {t['first_try']} of {t['batches']} valid at the first answer, {t['after_repair']} after a "
        f"repair, {t['given_up']} given up; {t['within_limits']} within every limit; facts grounded "
        f"{t['facts_grounded']}, quotes {t['quotes_grounded']}; people found {t['characters_recall']} "
        f"({t['characters_extra']} extra, {t['characters_split']} split, {t['characters_conflated']} "
        f"conflated); Hangul share of Korean summaries {t['hangul_share_mean']} (lowest "
        f"{t['hangul_share_min']}); median {t['prompt_tokens_median']:,.0f} prompt and "
        f"{t['completion_tokens_median']:,.0f} completion tokens (most {t['completion_tokens_max']:,}); "
        f"median {t['seconds_median']:,.0f} s a batch, {t['seconds_total'] / 60:,.0f} min in all.",
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default="", help="comma-separated conversation ids (own ids, or 'locomo')")
    parser.add_argument("--record", type=Path, help="write the own batches' raw answers here as fixtures")
    parser.add_argument("--out", type=Path, help="results file (default bench/results/llm_extraction.json)")
    parser.add_argument("--locomo", type=int, default=len(LOCOMO_SAMPLE), help="LoCoMo batches (the first N)")
    parser.add_argument("--report", action="store_true", help="print the docs' table of the saved run")
    args = parser.parse_args(argv)
    if args.report:
        print("\n".join(report(json.loads((args.out or RESULTS / "llm_extraction.json").read_text()))))
        return 0

    from memory_engine.settings import Settings
    from memory_engine.wiring import build_llm_extractor

    settings = Settings()
    recorder = Recorder()
    extractor = build_llm_extractor(settings, http_client=recorder.client())
    wanted = {item for item in args.only.split(",") if item}
    data = locomo_path()
    chosen = [
        b
        for b in [*own_batches(), *locomo_batches(data)[: args.locomo]]
        if not wanted or b.conversation in wanted or b.source in wanted
    ]
    batches = in_run_order(chosen)
    registries: dict[str, dict[str, list[str]]] = {}
    rows = []
    for batch in batches:
        start = len(recorder.exchanges)
        known = registries.get(batch.conversation, {})
        outcome = measure(batch, lambda b, c: extractor.extract(b.turns, c), known)
        exchanges = recorder.exchanges[start:]
        row = row_of(batch, outcome, exchanges)
        rows.append(row)
        if outcome["extraction"] is not None:
            found = json.loads(str(outcome["extraction"].metadata["characters_json"]))
            registries[batch.conversation] = update_registry(known, found)
        # LoCoMo's answers quote its turns (CC BY-NC): kept in the ignored cache, never committed.
        where = args.record if batch.source == "own" else CACHE
        if where is not None:
            record(where, batch, outcome["context"], exchanges, outcome["seconds"])
        print(f"{batch.id}: {row['outcome']} in {row['seconds']} s ({row['requests']} requests)", flush=True)
        # Saved after every batch: a run of hours on a busy machine keeps what it measured.
        _save(settings, data, args, rows, quiet=batch is not batches[-1])
    _print(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
