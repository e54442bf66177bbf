"""mem0's half of `bench.speed.peer_mem0`: runs in the mem0 venv (`make bench-mem0-env`), never the project's.

    .bench-venv/bin/python -m bench.speed.mem0_side --conversations 6 > mem0.json

mem0 (`mem0ai` 2.x) configured fully locally: the HuggingFace embedder on the same MiniLM weights
(the package path), FAISS on a temporary path, a dummy OpenAI LLM config that is never called
because every add is `infer=False` (each LoCoMo turn stored as it is, as the engine's built-in path
stores its turns). Prints one JSON object: ingest timing, per-search latencies and the ranked
dia_ids of every question. Imports only mem0, the standard library and bench.common.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

from bench.common import locomo_path, locomo_turns


def memory(folder: str, model_dir: str) -> Any:
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["MEM0_DIR"] = folder
    from mem0 import Memory

    return Memory.from_config(
        {
            "embedder": {"provider": "huggingface", "config": {"model": model_dir, "embedding_dims": 384}},
            "vector_store": {
                "provider": "faiss",
                "config": {
                    "collection_name": "locomo",
                    "path": os.path.join(folder, "faiss"),
                    "distance_strategy": "cosine",
                    "embedding_model_dims": 384,
                },
            },
            # Never called: every add is infer=False and search uses no LLM.
            "llm": {"provider": "openai", "config": {"model": "unused", "api_key": "unused"}},
            "history_db_path": os.path.join(folder, "history.db"),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=6)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()

    path = locomo_path()
    if path is None:
        raise SystemExit("LoCoMo dev data not found beside the checkout (../shared/data)")
    gold = [json.loads(line) for line in path.with_name("locomo-dev-gold.jsonl").read_text().splitlines()]
    turns_by_conv: dict[str, list[tuple[str, str]]] = {}
    for conv, dia_id, text in locomo_turns():
        turns_by_conv.setdefault(conv, []).append((dia_id, text))
    conversations = list(turns_by_conv)[: args.conversations]

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        mem = memory(folder, args.model_dir)
        mem.search("warm up", filters={"user_id": "none"}, top_k=1, threshold=0.0)
        load_s = time.perf_counter() - started
        ingest_s = 0.0
        count = 0
        for conv in conversations:
            for dia_id, text in turns_by_conv[conv]:
                started = time.perf_counter()
                mem.add(
                    [{"role": "user", "content": text}],
                    user_id=conv,
                    metadata={"dia_id": dia_id},
                    infer=False,
                )
                ingest_s += time.perf_counter() - started
                count += 1
        rankings: dict[str, list[str]] = {}
        latencies: list[float] = []
        for line in gold:
            if line["sample_id"] not in conversations or line["category"] == 5:
                continue
            started = time.perf_counter()
            found = mem.search(
                line["question"], filters={"user_id": line["sample_id"]}, top_k=10, threshold=0.0
            )
            latencies.append(time.perf_counter() - started)
            hits = found["results"] if isinstance(found, dict) else found
            rankings[f"{line['sample_id']}#{line['qa_index']}"] = [
                str((hit.get("metadata") or {}).get("dia_id", "")) for hit in hits
            ]
    json.dump(
        {"load_s": load_s, "turns": count, "ingest_s": ingest_s, "search_s": latencies, "rankings": rankings},
        sys.stdout,
    )


if __name__ == "__main__":
    main()
