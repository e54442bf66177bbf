"""How long the built-in extractor takes over one 8-turn batch (it runs in the worker, and on the
local server beside requests): the figure that used to be a timed test (`< 10 ms`, fastest of 10).

    python -m bench.speed.builtin_extractor [--runs 7] [--repeats 20]

Each run extracts an English and a Korean 8-turn batch `--repeats` times and keeps the median
milliseconds per batch; the result is the median over `--runs` runs (and the fastest and
slowest run's: on a shared host the fastest is the least disturbed). The
baseline, in the same run, is the analyser alone over the same batch's text (`retrieval.text.tokenize`,
what any lexical work on it costs at least). Target: a batch in under 10 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.common import print_table, save
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.domain import Turn
from memory_engine.ports import ExtractionContext
from memory_engine.retrieval.text import tokenize

TARGET_MS = 10.0
START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)

ENGLISH = [
    ("I went to the LGBTQ support group yesterday and it was powerful.", "What happened there?"),
    ("The stories were inspiring. I'm 28 and I finally feel accepted.", "I took my kids to the beach."),
    ("Captain Mira Holt from the shelter said adoption is possible.", "Holt helped families in Boston."),
    ("I want to adopt a child next year.", "Let's meet at the cafe on Friday to talk about it."),
    ("It was raining all morning here.", "Same here, cold and rainy."),
    ("My mom gave me a necklace from Sweden when I was 10.", "That is a lovely gift."),
    ("Are you still painting?", "Yes! I painted a sunset by the lake in July."),
    ("See you soon.", "Bye!"),
]
KOREAN = [
    ("어제 학교에서 친구들이랑 축구를 했어.", "재밌었겠다! 누가 이겼어?"),
    ("우리 반이 3대 2로 이겼어. 나는 골을 두 개 넣었어.", "나는 주말에 부산에 갈 거야."),
    ("부산에서 뭐 할 건데?", "할머니 댁에 가서 바다를 보고 싶어."),
    ("오늘은 비가 와서 집에 있었어.", "나도 고양이랑 집에서 쉬었어."),
    ("다음 주에 같이 도서관에 가자.", "좋아, 월요일 오후 3시에 만나자."),
    ("김철수 씨가 새로 전학 왔대.", "철수는 서울에서 왔다고 들었어."),
    ("나는 요리사가 되고 싶어.", "너는 요리를 정말 잘하잖아."),
    ("ㅋㅋ 그래", "응응"),
]


def batch(lines: list[tuple[str, str]], user: str, npc: str) -> list[Turn]:
    return [
        Turn(
            tenant="bench",
            session_uuid="s1",
            dialog_uuid=f"d{seq}",
            seq=seq,
            query=query,
            answer=answer,
            user_name=user,
            npc_id=npc,
            timestamp=START + timedelta(minutes=seq),
            created_at=START + timedelta(minutes=seq),
        )
        for seq, (query, answer) in enumerate(lines)
    ]


def per_call_ms(work: Callable[[], object], repeats: int) -> float:
    """The median milliseconds of `repeats` calls of `work`."""
    taken = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        taken.append(time.perf_counter() - started)
    return statistics.median(taken) * 1000


def measure(
    extractor: BuiltinExtractor, turns: list[Turn], context: ExtractionContext, runs: int, repeats: int
) -> dict[str, Any]:
    text = "\n".join(turn.text() for turn in turns)
    extract_ms, analyser_ms = [], []
    for _ in range(runs):
        extract_ms.append(per_call_ms(lambda: extractor.extract(turns, context), repeats))
        analyser_ms.append(per_call_ms(lambda: tokenize(text), repeats))
    return {
        "language": context.language,
        "turns": len(turns),
        "characters": len(text),
        "extract_ms_median": round(statistics.median(extract_ms), 2),
        "extract_ms_fastest_run": round(min(extract_ms), 2),
        "extract_ms_slowest_run": round(max(extract_ms), 2),
        "analyser_alone_ms_median": round(statistics.median(analyser_ms), 2),
        "under_target": statistics.median(extract_ms) < TARGET_MS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=20, help="extractions per run (their median)")
    args = parser.parse_args()
    extractor = BuiltinExtractor()
    batches = {
        "en": (batch(ENGLISH, "Caroline", "Melanie"), ExtractionContext(language="en")),
        "ko": (batch(KOREAN, "지은", "민수"), ExtractionContext(language="ko")),
    }
    extractor.extract(*batches["en"])  # first use loads the analysers: not part of a batch's cost
    extractor.extract(*batches["ko"])
    rows = [
        measure(extractor, turns, context, args.runs, args.repeats) for turns, context in batches.values()
    ]
    print_table(list(rows[0]), [list(row.values()) for row in rows])
    save(
        "builtin_extractor",
        {
            "scenario": {"runs": args.runs, "repeats": args.repeats, "target_ms": TARGET_MS},
            "note": "median of each run's median per batch; baseline: the analyser alone over its text",
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
