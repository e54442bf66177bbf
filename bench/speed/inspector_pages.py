"""The inspector's thread list at tenant scale, on DynamoDB (moto answers): what one page reads and
weighs at two tenant sizes, beside what the whole-tenant listing it replaced read.

    .venv/bin/python -m bench.speed.inspector_pages [--sizes 2000 20000]

Each size is a tenant of that many sessions (in threads of 4), half as many engine memories and a
quarter as many memory-bank facts in scopes of 10 (with each scope's count item, as the facts'
writes keep it), written straight to the table. For each, the
first page and a page further on of `GET /v1/inspect/threads` (limit 100) are counted: DynamoDB
calls, the items they examined (keys and items alike: what DynamoDB bills), and the JSON answer's
bytes; then the listing before paging (every session, every memory read to count the facts).
Deterministic counts, no timing. Writes bench/results/inspector_pages.json.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from datetime import UTC, datetime
from itertools import groupby
from pathlib import Path
from typing import Any
from unittest import mock

from bench.common import save
from memory_engine.adapters.aws import clients
from memory_engine.adapters.aws import dynamodb_fact_counts as fact_counts
from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws.dynamodb_keys import create_table_request
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.engine import Engine
from memory_engine.limits import Limits
from memory_engine.models.domain import FACT_KIND, Memory, MemoryFields, Session, scope_key
from memory_engine.models.inspect import ScopeView, SessionView, ThreadsResponse, ThreadView
from memory_engine.settings import Settings
from memory_engine.usecases import inspection

RESULTS = Path(__file__).resolve().parents[1] / "results" / "inspector_pages.json"
REGION = "us-east-1"
TENANT = "bench"
TABLE = "memory-engine"
PAGE = 100
WHEN = datetime(2026, 12, 1, tzinfo=UTC)
VECTOR = [0.5] * 8  # small: the counts do not depend on the vectors' length


class Reads:
    """DynamoDB calls and the items they examined, counted from botocore's events."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.items = 0
        events = clients.client("dynamodb", REGION).meta.events
        events.register("before-call.dynamodb.*", self._call)
        events.register("after-call.dynamodb.*", self._read)

    def _call(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def _read(self, parsed: Any, **_: Any) -> None:
        if "ScannedCount" in parsed:
            self.items += int(parsed["ScannedCount"])
        elif "Responses" in parsed:
            self.items += sum(len(found) for found in parsed["Responses"].values())

    def measure(self, run: Any) -> dict[str, Any]:
        self.calls.clear()
        self.items = 0
        answer = run()
        return {"calls": dict(self.calls), "items_read": self.items, "answer_bytes": len(answer)}


def fill(
    store: DynamoDbStore, sessions: int, facts: int | None = None, facts_per_scope: int = 10
) -> dict[str, int]:
    """A tenant of `sessions` sessions, half as many memories, `facts` facts (default: a quarter
    as many as sessions)."""
    puts: list[dict[str, Any]] = []
    for n in range(sessions):
        session = Session(
            tenant=TENANT, session_uuid=f"s{n:06d}", parent_session_uuid=f"t{n // 4:06d}", created_at=WHEN
        )
        puts.append(items.session_item(session, next_seq=1, buffered=0))
    memories = sessions // 2
    facts = sessions // 4 if facts is None else facts
    for n in range(memories):
        puts.append(
            items.memory_item(_memory(f"20261201_000000_{n:06x}", f"s{n:06d}", f"t{n // 4:06d}", {}))[0]
        )
    for n in range(facts):
        scope = {"user_id": f"u{n // facts_per_scope:05d}"}
        memory = _memory(f"20261201_000001_{n:06x}", "", scope_key(scope), scope)
        puts.append(items.memory_item(memory)[0])
    for first in range(0, facts, facts_per_scope):  # each scope's count, as its facts' writes keep it
        scope = {"user_id": f"u{first // facts_per_scope:05d}"}
        puts.append(
            fact_counts.count_item(TENANT, scope_key(scope), scope, min(facts_per_scope, facts - first))
        )
    for start in range(0, len(puts), 25):
        store.table.batch_write(puts[start : start + 25])
    scopes = -(-facts // facts_per_scope)
    return {"sessions": sessions, "memories": memories, "facts": facts, "scopes": scopes}


def _memory(memory_id: str, session: str, thread: str, scope: dict[str, str]) -> Memory:
    return Memory(
        tenant=TENANT,
        memory_id=memory_id,
        session_uuid=session,
        parent_session_uuid=thread,
        fields=MemoryFields(summary=f"memory {memory_id}"),
        source_dialog_uuids=[],
        first_seq=0,
        last_seq=0,
        embedding=VECTOR,
        created_at=WHEN,
        metadata={"kind": FACT_KIND} if scope else {},
        scope=scope,
    )


def whole_tenant(engine: Engine) -> str:
    """The listing before paging, answered as it was: every session, and every memory read to
    count the facts."""
    sessions = engine.store.list_sessions(TENANT)
    threads = [
        ThreadView(thread=thread, sessions=[SessionView.of(session) for session in group])
        for thread, group in groupby(sessions, key=lambda session: session.parent_session_uuid)
    ]
    facts = [memory for memory in engine.store.iter_memories(TENANT) if memory.is_fact]
    counts = Counter(scope_key(memory.visible_scope) for memory in facts)
    scopes = {scope_key(memory.visible_scope): memory.visible_scope for memory in facts}
    listed = [ScopeView(scope=scopes[key], thread=key, facts=counts[key]) for key in sorted(scopes)]
    return ThreadsResponse(threads=threads, scopes=listed).model_dump_json()


def one_size(
    sessions: int, page: int = PAGE, facts: int | None = None, facts_per_scope: int = 10
) -> dict[str, Any]:
    fake = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": REGION}
    from moto import mock_aws

    with mock.patch.dict(os.environ, fake), mock_aws():
        clients.forget_clients()
        clients.client("dynamodb", REGION).create_table(**create_table_request(TABLE))
        store = DynamoDbStore(TABLE, REGION)
        tenant = fill(store, sessions, facts, facts_per_scope)
        # The thread list reads the store alone: no queue, embedder or extractor is called.
        unused: Any = None
        engine = Engine(
            limits=Limits.of(Settings()),
            store=store,
            queue=unused,
            index=LocalSearchIndex(),
            embedder=unused,
            extractor=unused,
        )
        reads = Reads()
        first = inspection.threads(engine, TENANT, limit=page)
        row: dict[str, Any] = {
            "tenant": tenant,
            "first_page": reads.measure(
                lambda: inspection.threads(engine, TENANT, limit=page).model_dump_json()
            ),
        }
        if first.next_after:
            row["next_page"] = reads.measure(
                lambda: inspection.threads(
                    engine, TENANT, after=first.next_after, limit=page
                ).model_dump_json()
            )
        if first.next_scopes_after:
            row["next_scopes_page"] = reads.measure(
                lambda: inspection.threads(
                    engine, TENANT, scopes_after=first.next_scopes_after, limit=page
                ).model_dump_json()
            )
        row |= {
            "whole_tenant_before": reads.measure(lambda: whole_tenant(engine)),
        }
        clients.forget_clients()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = [one_size(size) for size in args.sizes]
    print(f"{'sessions':>9} {'page':<20} {'calls':>6} {'items read':>11} {'answer KB':>10}")
    for row in rows:
        for name in ("first_page", "next_page", "next_scopes_page", "whole_tenant_before"):
            if name not in row:
                continue
            found = row[name]
            calls = sum(found["calls"].values())
            kb = found["answer_bytes"] / 1024
            print(
                f"{row['tenant']['sessions']:>9} {name:<20} {calls:>6} {found['items_read']:>11} {kb:>10.1f}"
            )
    save(
        "inspector_pages",
        {"backend": "DynamoDB on moto (counts are deterministic; no timing)", "page": PAGE, "rows": rows},
        args.out,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
