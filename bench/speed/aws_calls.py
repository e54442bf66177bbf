"""AWS calls per engine operation with the DynamoDB store and the SQS FIFO queue (moto answers).

    .venv/bin/python -m bench.speed.aws_calls

What a deployment pays per request is its calls (latency: round trips; cost: requests and
capacity), so the table counts them per operation, with the bytes of the DynamoDB write requests.
The numbers are deterministic (no timing: moto's speed says nothing about DynamoDB's). The index is
the local one and the embedder a hashed bag of words: they make no AWS call here (on AWS, retrieve
adds one embedding invoke and one OpenSearch `_msearch` request, counted in
tests/unit/test_opensearch_retrieve.py). Writes bench/results/aws_calls.json.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

from bench.common import save
from memory_engine.adapters.aws import clients
from memory_engine.adapters.aws.dynamodb_keys import create_table_request
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.adapters.aws.sqs_queue import SqsQueue
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.indexing.documents import rebuild
from memory_engine.limits import Limits
from memory_engine.models.api import ConsolidateRequest, DeleteRequest, ForkRequest, RetrieveRequest
from memory_engine.models.domain import MemoryFields, scope_key
from memory_engine.models.export import Selection
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import EmbedMode
from memory_engine.settings import Settings
from memory_engine.usecases import consolidate, delete, export, extract, facts, fork, retrieve, sweep

RESULTS = Path(__file__).resolve().parents[1] / "results" / "aws_calls.json"
REGION = "us-east-1"
TENANT = "bench"
# The sweep's scene: sessions whose buffers hold turns below the extraction point.
SWEPT_SESSIONS, SWEPT_TURNS = 50, 5
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}


class HashedWords:
    """A deterministic stand-in embedder (no model to load: calls, not quality, are measured)."""

    dimension = 384

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        vectors = []
        for text in texts:
            vector = [0.0] * self.dimension
            for word in re.findall(r"\w+", text.lower()):
                vector[hashlib.md5(word.encode()).digest()[0] % self.dimension] += 1.0
            vectors.append(vector)
        return vectors


class Recorder:
    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.write_bytes = 0
        self.items_read = 0
        for service in ("dynamodb", "sqs"):
            events = clients.client(service, REGION).meta.events
            events.register(f"before-call.{service}.*", self._call)
            events.register(f"before-send.{service}.*", self._send)
        clients.client("dynamodb", REGION).meta.events.register("after-call.dynamodb.*", self._read)

    def _call(self, model: Any, **_: Any) -> None:
        self.calls[(model.service_model.service_name, model.name)] += 1

    def _send(self, request: Any, **_: Any) -> None:
        target = request.headers.get("X-Amz-Target", b"")
        name = (target.decode() if isinstance(target, bytes) else str(target)).rsplit(".", 1)[-1]
        if name in WRITES:
            self.write_bytes += len(request.body or b"")

    def _read(self, parsed: Any, **_: Any) -> None:
        # What a read examined (a Scan or Query pays for every item it scanned, projected or not).
        if "ScannedCount" in parsed:
            self.items_read += int(parsed["ScannedCount"])
        elif "Item" in parsed:
            self.items_read += 1
        elif "Responses" in parsed:
            self.items_read += sum(len(found) for found in parsed["Responses"].values())

    def measure(self, operation: Callable[[], object]) -> dict[str, Any]:
        self.calls.clear()
        self.write_bytes = 0
        self.items_read = 0
        operation()
        dynamodb = {name: n for (service, name), n in self.calls.items() if service == "dynamodb"}
        return {
            "dynamodb_reads": sum(n for name, n in dynamodb.items() if name not in WRITES),
            "dynamodb_items_read": self.items_read,
            "dynamodb_writes": sum(n for name, n in dynamodb.items() if name in WRITES),
            "dynamodb_write_bytes": self.write_bytes,
            "sqs": sum(n for (service, _), n in self.calls.items() if service == "sqs"),
            "calls": {f"{s}.{n}": c for (s, n), c in sorted(self.calls.items())},
        }


def say(engine: Engine, session: str, n: int, thread: str = "thread-1", **options: object) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": thread,
            "new_dialog": {
                "uuid": f"{session}-d{n}",
                "query": f"Turn {n}: I went hiking near the lake with Mira and we talked about her new job.",
                "answer": "That sounds lovely. How did she feel about the new team?",
            },
            "user_name": "Alex",
            "language": "en",
            "options": options,
        }
    )
    consolidate.run(engine, TENANT, request)


def scenario(engine: Engine, recorder: Recorder) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def row(operation: str, run: Callable[[], object], note: str = "") -> None:
        rows.append({"operation": operation, "note": note, **recorder.measure(run)})

    for n in range(1, 19):
        say(engine, "s1", n)
    row("consolidate, first turn of a session", lambda: say(engine, "s0", 1))
    row("consolidate, below the threshold", lambda: say(engine, "s1", 19))
    row("consolidate, replay of the same turn", lambda: say(engine, "s1", 19))
    row("consolidate, reaching the threshold", lambda: say(engine, "s1", 20), "queues one job")
    job = ExtractionJob(tenant=TENANT, session_uuid="s1")
    row("extraction job, 20 buffered turns", lambda: extract.run(engine, job), "2 memories of 8 turns")
    row("extraction job delivered again", lambda: extract.run(engine, job), "finds nothing to do")
    request = RetrieveRequest.model_validate(
        {
            "parent_session_uuids": ["thread-1"],
            "user_input": {"query": "Where did we go hiking?"},
            "options": {"limit": 7},
        }
    )
    row("retrieve, 1 thread, 2 memories + 5 buffered turns", lambda: retrieve.run(engine, TENANT, request))
    row(
        "delete an extracted dialog (cascade)",
        lambda: delete.run(engine, TENANT, DeleteRequest(session_uuid="s1", dialog_uuid="s1-d3")),
        "1 memory deleted, 7 turns back to the buffer",
    )
    for n in range(1, 401):
        say(engine, "long", n)
    extract.run(engine, ExtractionJob(tenant=TENANT, session_uuid="long", force=True))
    row(
        "fork of a 20-turn session at turn 12",
        lambda: fork.run(
            engine,
            TENANT,
            ForkRequest(source_session_uuid="s1", target_session_uuid="f1", cutoff_dialog_uuid="s1-d12"),
        ),
    )
    row(
        "fork of a 400-turn session at turn 400",
        lambda: fork.run(
            engine,
            TENANT,
            ForkRequest(source_session_uuid="long", target_session_uuid="f2", cutoff_dialog_uuid="long-d400"),
        ),
        "400 turns + 50 memories in chunks of 100 actions",
    )
    row("reindex of every memory of the tenant", lambda: rebuild(engine.store, LocalSearchIndex(), TENANT))
    scope = {"user_id": "alex"}
    row(
        "memory bank: create 120 facts of one scope",
        lambda: facts.create(engine, TENANT, scope, [f"Fact {n} about Alex." for n in range(120)]),
    )
    thread = scope_key(scope)
    row(
        "a scope's page of 100 facts",
        lambda: engine.store.list_thread_memories(TENANT, thread, limit=100),
        "gsi3 keys + one BatchGetItem",
    )
    for session in range(SWEPT_SESSIONS):
        for n in range(1, SWEPT_TURNS + 1):
            say(engine, f"waiting-{session}", n, thread=f"waiting-{session}")
    row(
        f"worker sweep, {SWEPT_SESSIONS} sessions of {SWEPT_TURNS} buffered turns",
        lambda: sweep.run(engine),
        "a Scan of gsi1 reads every buffered turn, these and the scene's others; a job per full buffer",
    )
    [fact] = engine.store.list_thread_memories(TENANT, thread, limit=1)
    changed = fact.model_copy(update={"fields": MemoryFields(summary="Alex moved to Busan.")})
    row("update one fact", lambda: engine.store.update_memory(changed))
    row(
        "delete a session of 400 turns + 50 memories",
        lambda: engine.store.delete_session(TENANT, "long"),
        "transactions of 100 actions, the session item last",
    )
    row(
        "sweep, nothing expired",
        lambda: sweep.run(engine),
        "16 gsi5 partitions queried for expired memories, then the gsi1 scan of buffers (one job queued)",
    )
    row(
        "export, the tenant's first page",
        lambda: export.page(engine.store, TENANT, Selection()),
        "up to 20 sessions with their turns and memories",
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    from moto import mock_aws

    fake = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": REGION}
    with mock.patch.dict(os.environ, fake), mock_aws():
        clients.forget_clients()
        clients.client("dynamodb", REGION).create_table(**create_table_request("memory-engine"))
        sqs = clients.client("sqs", REGION)
        url = sqs.create_queue(QueueName="extraction.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        engine = Engine(
            # The worker Lambda's job runs until its function's time is short (`Limits.job_seconds`
            # is infinite there), not the local worker's few seconds: so no extraction here stops
            # early on a slow host, and the counts do not depend on the host's speed.
            limits=replace(Limits.of(Settings()), job_seconds=math.inf),
            store=DynamoDbStore("memory-engine", REGION),
            queue=SqsQueue(url, REGION),
            index=LocalSearchIndex(),
            embedder=HashedWords(),
            extractor=BuiltinExtractor(),
        )
        rows = scenario(engine, Recorder())
        clients.forget_clients()

    print(f"{'operation':52} {'reads':>6} {'writes':>6} {'write KB':>9} {'sqs':>4}")
    for row in rows:
        kb = row["dynamodb_write_bytes"] / 1024
        reads, writes = row["dynamodb_reads"], row["dynamodb_writes"]
        print(f"{row['operation']:52} {reads:>6} {writes:>6} {kb:>9.1f} {row['sqs']:>4}")
    backend = "DynamoDB + SQS FIFO on moto (calls are deterministic; no timing)"
    save("aws_calls", {"backend": backend, "rows": rows}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
