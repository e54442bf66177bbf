"""The LLM extraction benchmark's rows and totals (bench/quality/llm_extraction.py), and the docs' table made
from a saved run."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from typing import Any

from bench.common import print_table
from bench.quality import llm_quality
from bench.quality.llm_batches import Batch
from memory_engine.extraction.schema import MemoryOut


def answers(exchanges: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The 200 answers' choices (content and finish reason), in order."""
    out = []
    for exchange in exchanges:
        body = exchange["body"]
        # A stream cut at its deadline or broken off is no answer of the model's.
        answered = exchange["status"] == 200 and isinstance(body, dict) and body.get("choices")
        if answered and not body.get("cut"):
            choice = body["choices"][0]
            out.append(
                {"content": choice["message"].get("content") or "", "finish": choice.get("finish_reason")}
            )
    return out


def row_of(batch: Batch, outcome: dict[str, Any], exchanges: Sequence[dict[str, Any]]) -> dict[str, Any]:
    given = answers(exchanges)
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
        "answers": len(given),
        "refused_modes": sorted({e["mode"] for e in exchanges if e["status"] >= 400}),
        "finish_reasons": [answer["finish"] for answer in given],
        "seconds": round(outcome["seconds"], 1),
        "prompt_tokens": sum(int(u.get("prompt_tokens") or 0) for u in usage),
        "completion_tokens": sum(int(u.get("completion_tokens") or 0) for u in usage),
        "cut_requests": sum(1 for e in exchanges if isinstance(e["body"], dict) and e["body"].get("cut")),
    }
    # The extractor's own count, every request's (estimated where the server reported none, as
    # llama-cpp-python's streams do not), when it gives one.
    counted = dict(extraction.metadata) if extraction is not None else dict(getattr(error, "spent", {}) or {})
    if "prompt_tokens" in counted:
        row["prompt_tokens"] = int(counted["prompt_tokens"])
        row["completion_tokens"] = int(counted["completion_tokens"])
        row["tokens_estimated"] = bool(counted.get("tokens_estimated"))
    if extraction is None:
        return {**row, "outcome": "given_up", "error": f"{type(error).__name__}: {error}"[:400]}
    row["outcome"] = "first_try" if len(given) == 1 else "after_repair"
    row["structured_output"] = extraction.metadata.get("structured_output")
    fields = extraction.fields
    out = MemoryOut.model_validate_json(given[-1]["content"])
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


def print_rows(rows: Sequence[dict[str, Any]]) -> None:
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


def _settings_line(result: dict[str, Any]) -> list[str]:
    """The request timeout and batch bound the run had, and whether a batch went past its bound."""
    if result.get("batch_seconds") is None:
        return []
    threads = result.get("server_threads")
    return [
        f"Each request {result['timeout_seconds']:,.0f} s at most, "
        f"each batch {result['batch_seconds']:,.0f} s"
        + (f"; the server decoding on {threads} thread(s)" if threads else "")
        + f"; batches past their bound: {result.get('past_deadline', 0)}.",
        "",
    ]


def report(result: dict[str, Any]) -> list[str]:
    """docs/configuration.md's table of a saved run (`--report`): one row per batch, then the totals."""
    machine = result["machine"]
    lines = [
        f"`{result['model']}`, structured output `{result['structured_output']}` as configured; "
        f"{machine['cores']} cores ({machine['cpu']}), 1-min load {machine['load_average_1m']} at the end.",
        "",
        *_settings_line(result),
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
