"""What the API dialects cost per call, in process over the real local adapters (medians, ms).

    PYTHONPATH=layers/core:. .venv/bin/python -m bench.speed.dialects [--facts 100 1000] [--runs 50]

The embedded default: SQLite store and queue on a temporary file, the in-memory index, the
all-MiniLM-L6-v2 embedder, the built-in fact extractor. A query's embedding is part of every
search below; its own median is printed beside them. Writes bench/results/dialects.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import save
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.limits import Limits
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.bank import CreateMemoryRequest, RetrieveMemoriesRequest
from memory_engine.models.chat import ChatCompletionRequest
from memory_engine.models.game import GameMemoryRequest
from memory_engine.models.messages import ChatMemoryJob
from memory_engine.settings import Settings
from memory_engine.usecases import bank, bank_retrieve, chat, chat_memory, consolidate, facts, game_memory

RESULTS = Path(__file__).resolve().parents[1] / "results" / "dialects.json"
TENANT = "bench"
PEOPLE = ["my sister", "my brother", "my neighbour", "my boss", "my friend Ana", "my cousin", "my dentist"]
PLACES = ["Lisbon", "Busan", "Reykjavik", "Porto", "Osaka", "Nairobi", "Lima", "Tartu", "Hobart"]
HABITS = ["plays the cello", "runs marathons", "grows tomatoes", "collects stamps", "bakes bread"]


def fact_text(n: int) -> str:
    person, place, habit = PEOPLE[n % 7], PLACES[n % 9], HABITS[n % 5]
    return f"{person.capitalize()} lives in {place}, {habit} and was mentioned in chat number {n}."


def timed(action: Callable[[], Any], runs: int) -> float:
    """Median milliseconds of `runs` calls (after one warm-up call)."""
    action()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(samples), 3)


def build_engine(directory: str, threads: int = 1) -> Engine:
    path = os.path.join(directory, "bench.sqlite3")
    return Engine(
        limits=Limits.of(Settings(chat_model="bench-model")),
        store=SqliteStore(path),
        queue=SqliteQueue(path),
        index=LocalSearchIndex(),
        embedder=OnnxEmbedder("minilm", threads=threads),
        extractor=BuiltinExtractor(),
    )


def fill(engine: Engine, scope: dict[str, str], size: int) -> None:
    for start in range(0, size, 64):
        facts.create(engine, TENANT, scope, [fact_text(n) for n in range(start, min(start + 64, size))])


def scope_row(engine: Engine, size: int, runs: int) -> dict[str, Any]:
    """A bank scope and a chat user, each holding `size` facts."""
    scope = {"user_id": f"bench-{size}"}
    fill(engine, scope, size)
    userid = str(uuid.uuid4())
    fill(engine, chat_memory.user_scope(userid), size)
    search = RetrieveMemoriesRequest.model_validate(
        {"scope": scope, "similarity_search_params": {"search_query": "Where does my sister live?"}}
    )
    page = RetrieveMemoriesRequest.model_validate({"scope": scope, "simple_retrieval_params": {}})
    with_memory = ChatCompletionRequest.model_validate(
        {"messages": [{"role": "user", "content": "Where does my sister live?"}], "userid": userid}
    )
    return {
        "facts_in_scope": size,
        "similarity_top3_ms": timed(lambda: bank_retrieve.run(engine, TENANT, search), runs),
        "simple_page_100_ms": timed(lambda: bank_retrieve.run(engine, TENANT, page), runs),
        "chat_memory_prompt_ms": timed(lambda: chat.plan(engine, TENANT, with_memory), runs),
    }


def call_rows(engine: Engine, runs: int, turns: int) -> dict[str, float]:
    counter = iter(range(10**9))
    create = CreateMemoryRequest(fact="The user's dog is named Pepper.", scope={"user_id": "bench-create"})
    plain = ChatCompletionRequest.model_validate({"messages": [{"role": "user", "content": "hello"}]})
    for n in range(turns):
        consolidate.run(
            engine,
            TENANT,
            ConsolidateRequest.model_validate(
                {
                    "session_uuid": "game-bench",
                    "parent_session_uuid": "game-bench",
                    "new_dialog": {"uuid": f"d{n}", "query": fact_text(n), "npc_id": f"npc{n % 3}"},
                    "language": "en",
                }
            ),
        )
    read = GameMemoryRequest(session_id="game-bench")

    def record() -> None:
        job = ChatMemoryJob(
            tenant=TENANT,
            userid=str(uuid.uuid4()),
            dialog_uuid=f"chat-{next(counter)}",
            user_messages=["My sister moved to Lisbon last month and she plays the cello."],
            answer="How lovely!",
            language="en",
        )
        chat_memory.run(engine, job)

    return {
        "query_embedding_ms": timed(lambda: engine.embedder.embed(["Where is my sister?"], "query"), runs),
        "bank_create_ms": timed(lambda: bank.create(engine, TENANT, create), runs),
        "chat_passthrough_prompt_ms": timed(lambda: chat.plan(engine, TENANT, plain), runs),
        "chat_record_worker_ms": timed(record, runs),
        f"game_memory_read_{turns}_turns_ms": timed(lambda: game_memory.run(engine, TENANT, read), runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, nargs="+", default=[100, 1_000])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--turns", type=int, default=1_000, help="turns of the game session read back")
    parser.add_argument("--threads", type=int, default=1, help="embedder threads (a 1-2 vCPU Lambda)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    # The embedder is ONNX (no torch in the project's venv): its own thread count is the bound.
    with tempfile.TemporaryDirectory() as directory:
        engine = build_engine(directory, args.threads)
        calls = call_rows(engine, args.runs, args.turns)
        rows = [scope_row(engine, size, args.runs) for size in args.facts]
    for name, value in calls.items():
        print(f"{name:>36} {value:>8}")
    header = ("facts", "similarity top3", "simple page", "chat prompt")
    print(" ".join(f"{title:>16}" for title in header))
    for row in rows:
        print(" ".join(f"{value:>16}" for value in row.values()))
    payload = {"runs": args.runs, "threads": args.threads, "calls": calls, "scopes": rows}
    save("dialects", payload, args.out)


if __name__ == "__main__":
    main()
