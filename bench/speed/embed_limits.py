"""What the largest legal `POST /v1/engine/embed/` costs, per script, against its deadline.

    python -m bench.speed.embed_limits [--limits 16384 65536] [--rounds 3]

For each request total in `--limits` (characters, `MEMORY_ENGINE_EMBED_REQUEST_MAX_CHARS`) and each
script (Latin, Hangul, CJK ideographs, emoji, and a mix of the four), the largest request the
route accepts: as many texts as fit, each at the per-text cap (`MEMORY_ENGINE_EMBED_MAX_CHARS`,
2,048 characters, all of which are embedded). It is embedded by the default model (e5 on ONNX
Runtime) behind the engine's bound, on one thread: the share of one vCPU is what a function gets
at the documented memory size (the embedding image's 2,048 MB is ~1.16 vCPU; a 1,024 MB API
function ~0.58), so the CPU seconds of one thread stand for its seconds there. Reported per
script: e5 tokens and 510-token windows, CPU seconds and wall seconds (medians over rounds), and
whether the CPU seconds fit the request deadline (28 s less the 1 s kept to answer in) with the
margin `--margin` asks for (default 2: cold starts, a slower vCPU, a busy host).

CPU seconds move much less with the host's load than wall seconds; both are recorded with the
1-min load. Writes bench/results/embed_limits.json.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import time
from typing import Any

from bench.common import ROOT, print_table, save, stamped

DEADLINE_S = 27.0  # the API functions' 28 s timeout, less the second kept to answer in
TEXT_CHARS = 2_048  # MEMORY_ENGINE_EMBED_MAX_CHARS: every character of a text at the cap is embedded
WINDOW = 510


def scripts(seed: int = 42) -> dict[str, str]:
    """One text of TEXT_CHARS characters per script (fixed seed)."""
    draw = random.Random(seed)

    def run(low: int, high: int) -> str:
        return "".join(chr(draw.randint(low, high)) for _ in range(TEXT_CHARS))

    latin = ("We talked about the harbour, the boats and the weather at dawn. " * 40)[:TEXT_CHARS]
    hangul = ("민지는 오늘 학교에서 친구들과 도서관에 갔다가 저녁에 떡볶이를 먹었다. " * 60)[:TEXT_CHARS]
    cjk, emoji = run(0x4E00, 0x9FFF), run(0x1F300, 0x1FAFF)
    mixed = "".join(draw.choice((latin, hangul, cjk, emoji))[i] for i in range(TEXT_CHARS))
    return {"Latin": latin, "Hangul": hangul, "CJK": cjk, "emoji": emoji, "mixed": mixed}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limits", type=int, nargs="+", default=[16_384, 65_536])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--margin", type=float, default=2.0)
    args = parser.parse_args()

    from memory_engine.adapters.local.encoders import E5Encoder
    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder
    from memory_engine.embedding import BoundedEmbedder

    model = OnnxEmbedder("e5", threads=1)
    bounded = BoundedEmbedder(model, max_chars=TEXT_CHARS)
    bounded.embed(["warm up"], mode="passage")
    encoder, _ = model._load()
    assert isinstance(encoder, E5Encoder)
    rows: list[dict[str, Any]] = []
    for limit in args.limits:
        count = limit // TEXT_CHARS
        for script, text in scripts().items():
            tokens = len(encoder.tokenizer.ids_batch(["passage: " + text])[0])
            cpu, wall = [], []
            for _ in range(args.rounds):
                started, started_cpu = time.perf_counter(), time.process_time()
                bounded.embed([text] * count, mode="passage")
                cpu.append(time.process_time() - started_cpu)
                wall.append(time.perf_counter() - started)
            cpu_s = statistics.median(cpu)
            row = {
                "limit_chars": limit,
                "script": script,
                "texts": count,
                "e5_tokens": tokens * count,
                "windows": -(-tokens // WINDOW) * count,
                "cpu_s": round(cpu_s, 2),
                "wall_s": round(statistics.median(wall), 2),
                "fits_deadline": cpu_s * args.margin <= DEADLINE_S,
            }
            rows.append(stamped(row))
            print(
                f"{limit} {script}: {row['windows']} windows, {row['cpu_s']} CPU s, {row['wall_s']} s",
                flush=True,
            )
    print_table(
        ["limit", "script", "texts", "windows", "CPU s", "wall s", f"fits {DEADLINE_S:g} s ×{args.margin:g}"],
        [
            [
                r["limit_chars"],
                r["script"],
                r["texts"],
                r["windows"],
                r["cpu_s"],
                r["wall_s"],
                r["fits_deadline"],
            ]
            for r in rows
        ],
    )
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    save(
        "embed_limits",
        {
            "commit": commit.stdout.strip(),
            "deadline_s": DEADLINE_S,
            "margin": args.margin,
            "threads": 1,
            "rounds": args.rounds,
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
