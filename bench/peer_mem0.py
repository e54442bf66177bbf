"""The engine beside mem0, one run: ingest throughput, search latency, LoCoMo dev Recall@10.

    make bench-mem0-env            # once: mem0 in its own venv (.bench-venv), never the project's
    python -m bench.peer_mem0 [--conversations 2]

Both sides get the same LoCoMo dev conversations, turn by turn as the retrieval protocol of
docs/evaluation.md says (one turn = one dialog, "speaker: text"), then every question of
categories 1-4 of those conversations. The engine runs in process through its use cases
(consolidate, the local worker's extraction with the built-in extractor, retrieve with limit 10)
on the embedded backend and its default ONNX embedder; mem0 runs in .bench-venv through
`bench.mem0_side` (HuggingFace embedder on the same MiniLM weights, FAISS, `add(infer=False)`).
Search latency includes the query embedding on both sides. mem0's ingest embeds each turn as it
is added; the engine's consolidate embeds nothing, so its ingest is shown twice: the request path
alone, and until everything is extracted, embedded and indexed.

Recall@10: the ranking turned into dia_ids (a memory stands for its turns in order, a raw turn for
itself, repeats dropped), share of gold turns among the first 10, averaged over questions. A
small scorer kept here on purpose: `bench/retrieval` (branch issue-6) has the full harness and can
replace it. Writes bench/results/peer_mem0.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.common import ROOT, locomo_path, median, percentile, print_table, save

BENCH_VENV = ROOT / ".bench-venv"


def load(conversations: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    path = locomo_path()
    if path is None:
        raise SystemExit("LoCoMo dev data not found beside the checkout (../shared/data)")
    samples = json.loads(path.read_text())[:conversations]
    names = {sample["sample_id"] for sample in samples}
    gold = [
        line
        for line in map(json.loads, path.with_name("locomo-dev-gold.jsonl").read_text().splitlines())
        if line["sample_id"] in names and line["category"] != 5
    ]
    return samples, gold


def recall_at_10(rankings: dict[str, list[str]], gold: list[dict[str, Any]]) -> float:
    scores = []
    for line in gold:
        ranked = list(dict.fromkeys(rankings.get(f"{line['sample_id']}#{line['qa_index']}", [])))[:10]
        wanted = set(line["gold_turns"])
        scores.append(len(wanted.intersection(ranked)) / len(wanted))
    return sum(scores) / len(scores)


def _session_time(raw: str | None) -> str | None:
    # "1:56 pm on 8 May, 2023" -> ISO 8601; the engine takes the turn's timestamp from it.
    if not raw:
        return None
    try:
        return datetime.strptime(raw, "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        return None


def engine_side(samples: list[dict[str, Any]], gold: list[dict[str, Any]]) -> dict[str, Any]:
    from bench.ingest import local_engine
    from memory_engine import wiring
    from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
    from memory_engine.usecases import consolidate, retrieve

    tenant = "bench"
    with tempfile.TemporaryDirectory() as scratch, local_engine(Path(scratch)):
        started = time.perf_counter()
        engine = wiring.engine()
        engine.embedder.embed(["warm up"])
        load_s = time.perf_counter() - started
        worker = wiring.local_worker(engine, sweep=False)
        consolidate_s = extract_s = 0.0
        count = 0
        for sample in samples:
            conversation = sample["conversation"]
            numbers = sorted(
                int(key.split("_")[1])
                for key in conversation
                if key.startswith("session_") and not key.endswith("date_time")
            )
            requests = [
                ConsolidateRequest.model_validate(
                    {
                        "session_uuid": f"{sample['sample_id']}-S{number}",
                        "parent_session_uuid": sample["sample_id"],
                        "new_dialog": {
                            "uuid": turn["dia_id"],
                            "query": turn["text"],
                            "answer": "",
                            **({"timestamp": stamp} if stamp else {}),
                        },
                        "user_name": turn["speaker"],
                        "language": "en",
                    }
                )
                for number in numbers
                for stamp in [_session_time(conversation.get(f"session_{number}_date_time"))]
                for turn in conversation[f"session_{number}"]
            ]
            started = time.perf_counter()
            for request in requests:
                consolidate.run(engine, tenant, request)
            consolidate_s += time.perf_counter() - started
            started = time.perf_counter()
            worker.drain()
            extract_s += time.perf_counter() - started
            count += len(requests)
        rankings: dict[str, list[str]] = {}
        latencies = []
        for line in gold:
            question = RetrieveRequest.model_validate(
                {
                    "parent_session_uuids": [line["sample_id"]],
                    "last_dialog_uuid": "bench-none",
                    "user_input": {"query": line["question"]},
                    "options": {"limit": 10},
                }
            )
            started = time.perf_counter()
            answer = retrieve.run(engine, tenant, question)
            latencies.append(time.perf_counter() - started)
            rankings[f"{line['sample_id']}#{line['qa_index']}"] = [
                dialog for hit in answer.data for dialog in hit.source_dialog_uuids
            ]
    return {
        "load_s": load_s,
        "turns": count,
        "consolidate_s": consolidate_s,
        "ingest_s": consolidate_s + extract_s,
        "search_s": latencies,
        "rankings": rankings,
    }


def mem0_side(conversations: int) -> dict[str, Any]:
    from memory_engine.adapters.local.encoders import packaged_minilm_dir as packaged_model_dir

    python = BENCH_VENV / "bin" / "python"
    if not python.is_file():
        raise SystemExit("mem0's environment is missing: run `make bench-mem0-env` first")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [str(python), "-m", "bench.mem0_side", "--conversations", str(conversations),
         "--model-dir", str(packaged_model_dir())],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"mem0 side failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def mem0_version() -> str:
    python = BENCH_VENV / "bin" / "python"
    code = "from importlib.metadata import version; print(version('mem0ai'))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2, help="LoCoMo dev conversations (1-6)")
    args = parser.parse_args()

    if locomo_path() is None:
        # The data is licensed for evaluation only and never shipped: without it, say so and move on
        # (make bench goes on with the other benchmarks' results intact).
        print("peer_mem0 skipped: LoCoMo dev data not found beside the checkout (../shared/data)")
        return
    samples, gold = load(args.conversations)
    mine = engine_side(samples, gold)
    print(f"  engine done: {mine['turns']} turns, {len(mine['search_s'])} questions", flush=True)
    theirs = mem0_side(args.conversations)
    print(f"  mem0 done: {theirs['turns']} turns", flush=True)

    def summary(side: dict[str, Any]) -> dict[str, float]:
        return {
            "ingest_turns_per_s": side["turns"] / side["ingest_s"],
            "search_p50_ms": median(side["search_s"]) * 1000,
            "search_p95_ms": percentile(side["search_s"], 0.95) * 1000,
            "recall_at_10": recall_at_10(side["rankings"], gold),
            "load_s": side["load_s"],
        }

    engine, peer = summary(mine), summary(theirs)
    engine["request_path_turns_per_s"] = mine["turns"] / mine["consolidate_s"]
    rows: list[list[Any]] = [
        ["ingest turns/s (until searchable)", engine["ingest_turns_per_s"], peer["ingest_turns_per_s"]],
        ["ingest turns/s (request path)", engine["request_path_turns_per_s"], peer["ingest_turns_per_s"]],
        ["search p50 ms", engine["search_p50_ms"], peer["search_p50_ms"]],
        ["search p95 ms", engine["search_p95_ms"], peer["search_p95_ms"]],
        ["LoCoMo dev Recall@10", engine["recall_at_10"], peer["recall_at_10"]],
        ["load s (model + store)", engine["load_s"], peer["load_s"]],
    ]
    for row in rows:
        better_low = "ms" in row[0] or "load" in row[0]
        row.append(f"x{(row[2] / row[1] if better_low else row[1] / row[2]):.2f}")
    print_table(["measure", "memory-engine", "mem0", "engine advantage"], rows)
    save(
        "peer_mem0",
        {
            "conversations": [sample["sample_id"] for sample in samples],
            "questions": len(gold),
            "turns": mine["turns"],
            "mem0": {
                "version": mem0_version(),
                "config": "huggingface MiniLM (same weights), faiss, infer=False",
            },
            "engine": engine,
            "peer": peer,
        },
    )


if __name__ == "__main__":
    main()
