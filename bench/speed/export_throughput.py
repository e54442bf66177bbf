"""Export and import throughput on the local backend: `memory-engine export` / `import` and the pages
of `GET /v1/export`, at a few tenant sizes.

    .venv/bin/python -m bench.speed.export_throughput [--sizes 1000 10000] [--runs 3]

Each size is a tenant of that many engine memories (5 per session, 4 turns each, sessions in
threads of 4, every memory with its vectors as the worker writes them) and a tenth as many
memory-bank facts, written straight to a SQLite store. Every measured step runs in a child
process of its own, so its peak RSS is its own (`os.wait4`):
- export: `export.walk` written as JSON lines to a file, the path of `memory-engine export`;
- pages: `export.page` one page after another with each page's JSON, what `GET /v1/export` does
  per request (authentication and the HTTP hop left out);
- import: the file read back into an empty store through `import_records.run`, the path of
  `memory-engine import`, with a hash embedder in place of the model: import re-embeds every
  memory and turn with the target's model, which adds its own passages/s (the embedding result).
Records per second, bytes, page p50/p95; the median of `--runs` runs each. Writes
bench/results/export_throughput.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import print_table, save
from bench.speed.tables import EXPORT_HEADER, export_cells

TENANT = "bench"
DIMENSION = 384  # e5-small's: what the store holds per vector by default
PER_SESSION, TURNS_PER_MEMORY, SESSIONS_PER_THREAD = 5, 4, 4
WHEN = datetime(2026, 12, 1, tzinfo=UTC)


class HashEmbedder:
    """A vector from a text's digest: import's embedding calls cost next to nothing here."""

    dimension = DIMENSION

    def embed(self, texts: Sequence[str], mode: str = "passage") -> list[list[float]]:
        return [_vector(text) for text in texts]


def _vector(text: str) -> list[float]:
    seed = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return [((seed[i % 8] + i) % 17 - 8) / 8.0 for i in range(DIMENSION)]


def fill(database: Path, memories: int) -> None:
    """A tenant of `memories` engine memories and a tenth as many facts, written in one go."""
    from memory_engine.adapters.local.sqlite_rows import insert_memories, insert_session, insert_turns
    from memory_engine.adapters.local.sqlite_store import SqliteStore
    from memory_engine.models.domain import FACT_KIND, Memory, MemoryFields, Session, Turn, TurnStatus

    store = SqliteStore(database)
    with store._db.write() as conn:
        for s in range(memories // PER_SESSION):
            session_uuid, thread = f"s{s:06d}", f"t{s // SESSIONS_PER_THREAD:05d}"
            when = WHEN + timedelta(hours=s)
            turns, kept = [], []
            for m in range(PER_SESSION):
                memory_id = f"m{s:06d}{m}"
                batch = []
                for t in range(TURNS_PER_MEMORY):
                    seq = m * TURNS_PER_MEMORY + t
                    text = (
                        f"Turn {seq} of {session_uuid}: I moved to city {s % 97}, adopted a dog named D{seq}."
                    )
                    batch.append(
                        Turn(
                            tenant=TENANT,
                            session_uuid=session_uuid,
                            dialog_uuid=f"d{s:06d}-{seq}",
                            seq=seq,
                            query=text,
                            answer="That sounds lovely, tell me more about it.",
                            user_name="Mina",
                            timestamp=when,
                            created_at=when,
                            status=TurnStatus.EXTRACTED,
                            memory_id=memory_id,
                            embedding=_vector(text),
                        )
                    )
                turns += batch
                facts = [f"Mina: I moved to city {s % 97}.", f"Mina: I adopted a dog named D{m}."]
                kept.append(
                    Memory(
                        tenant=TENANT,
                        memory_id=memory_id,
                        session_uuid=session_uuid,
                        parent_session_uuid=thread,
                        fields=MemoryFields(
                            summary=" ".join(facts),
                            key_facts=facts,
                            keywords=["city", "dog"],
                            characters=["Mina"],
                        ),
                        source_dialog_uuids=[turn.dialog_uuid for turn in batch],
                        first_seq=batch[0].seq,
                        last_seq=batch[-1].seq,
                        embedding=_vector(memory_id),
                        turn_embeddings=[_vector(turn.query) for turn in batch],
                        window_embeddings=[_vector(turn.query + "w") for turn in batch],
                        source_text="\n".join(turn.query for turn in batch),
                        created_at=when,
                    )
                )
            insert_session(
                conn,
                Session(
                    tenant=TENANT,
                    session_uuid=session_uuid,
                    parent_session_uuid=thread,
                    next_seq=len(turns),
                    created_at=when,
                ),
            )
            insert_turns(conn, turns)
            insert_memories(conn, kept)
        bank = [
            Memory(
                tenant=TENANT,
                memory_id=f"f{i:06d}",
                session_uuid="",
                parent_session_uuid=f"user:{i // 10}",
                fields=MemoryFields(summary=f"Prefers tea number {i}."),
                source_dialog_uuids=[],
                first_seq=0,
                last_seq=0,
                embedding=_vector(f"f{i}"),
                created_at=WHEN,
                metadata={"kind": FACT_KIND},
                scope={"user_id": str(i // 10)},
            )
            for i in range(memories // 10)
        ]
        insert_memories(conn, bank)
    store.close()


def child(step: str, database: Path, file: Path) -> dict[str, Any]:
    """One measured step, in this (child) process."""
    from memory_engine.adapters.local.sqlite_store import SqliteStore
    from memory_engine.models.export import EXPORT_VERSION, Cursor, ExportRecord, Selection
    from memory_engine.usecases import export

    started = time.perf_counter()
    if step == "export":
        store, records = SqliteStore(database), 0
        with file.open("w", encoding="utf-8") as sink:
            header = ExportRecord(
                kind="export", version=EXPORT_VERSION, tenant=TENANT, exported_at=WHEN.isoformat()
            )
            sink.write(header.model_dump_json() + "\n")  # as the CLI writes it
            for record in export.walk(store, TENANT, Selection()):
                sink.write(record.model_dump_json() + "\n")
                records += 1
        return {"records": records, "seconds": time.perf_counter() - started, "bytes": file.stat().st_size}
    if step == "pages":
        store, seconds, sizes = SqliteStore(database), [], []
        cursor: Cursor | None = Cursor()
        while cursor is not None:
            began = time.perf_counter()
            found = export.page(store, TENANT, Selection(), cursor)
            body = found.model_dump_json()
            seconds.append(time.perf_counter() - began)
            sizes.append(len(body.encode()))
            cursor = Cursor.decode(found.next_cursor) if found.next_cursor else None
        return {"pages": len(seconds), "seconds": seconds, "bytes": sizes}
    from memory_engine.adapters.local.memory_index import LocalSearchIndex
    from memory_engine.adapters.local.sqlite_queue import SqliteQueue
    from memory_engine.engine import Engine
    from memory_engine.extraction.builtin import BuiltinExtractor
    from memory_engine.limits import Limits
    from memory_engine.retrieval.config import RetrievalConfig
    from memory_engine.settings import Settings
    from memory_engine.usecases import import_records

    engine = Engine(
        limits=Limits.of(Settings()),
        store=SqliteStore(database),
        queue=SqliteQueue(database),
        index=LocalSearchIndex(),
        embedder=HashEmbedder(),
        extractor=BuiltinExtractor(),
        retrieval=RetrievalConfig(),
    )
    with file.open(encoding="utf-8") as source:
        lines = [ExportRecord.model_validate_json(line) for line in source if line.strip()]
    report = import_records.run(engine, TENANT, lines)
    return {"records": len(lines) - 1, "seconds": time.perf_counter() - started, "written": report.written}


def _measured(step: str, database: Path, file: Path) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "bench.speed.export_throughput",
        "--child",
        step,
        str(database),
        str(file),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"{step} failed ({status})")
    return {**json.loads(out.strip().splitlines()[-1]), "rss_mb": round(usage.ru_maxrss / 1024, 1)}


def run_size(memories: int, runs: int) -> dict[str, Any]:
    exports, pages, imports = [], [], []
    with tempfile.TemporaryDirectory(prefix="export-bench-") as workdir:
        source, file = Path(workdir) / "source.sqlite3", Path(workdir) / "export.jsonl"
        fill(source, memories)
        for run in range(runs):
            exports.append(_measured("export", source, file))
            pages.append(_measured("pages", source, file))
            target = Path(workdir) / f"target-{run}.sqlite3"
            imports.append(_measured("import", target, file))
    page_ms = sorted(1000 * s for run in pages for s in run["seconds"])
    page_bytes = [b for run in pages for b in run["bytes"]]
    records = exports[0]["records"]
    return {
        "memories": memories,
        "facts": memories // 10,
        "turns": memories * TURNS_PER_MEMORY,
        "records": records,
        "file_bytes": exports[0]["bytes"],
        "export_records_per_s": round(statistics.median(records / e["seconds"] for e in exports)),
        "export_seconds": round(statistics.median(e["seconds"] for e in exports), 2),
        "export_rss_mb": statistics.median(e["rss_mb"] for e in exports),
        "pages": pages[0]["pages"],
        "page_p50_ms": round(page_ms[len(page_ms) // 2], 1),
        "page_p95_ms": round(page_ms[min(len(page_ms) - 1, int(0.95 * len(page_ms)))], 1),
        "page_kb_median": round(statistics.median(page_bytes) / 1024, 1),
        "pages_rss_mb": statistics.median(p["rss_mb"] for p in pages),
        "import_records_per_s": round(statistics.median(records / i["seconds"] for i in imports)),
        "import_seconds": round(statistics.median(i["seconds"] for i in imports), 2),
        "import_rss_mb": statistics.median(i["rss_mb"] for i in imports),
        "import_written": imports[-1]["written"],
        "runs": runs,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs=3, metavar=("STEP", "DATABASE", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        step, database, file = args.child
        print(json.dumps(child(step, Path(database), Path(file))))
        return
    rows = []
    for size in args.sizes:
        rows.append(run_size(size, args.runs))
        print(f"{size} memories: done", flush=True)
    print_table(EXPORT_HEADER, [export_cells(row) for row in rows])
    save("export_throughput", {"rows": rows, "meta": {"dimension": DIMENSION, "embedder": "hash (import)"}})


if __name__ == "__main__":
    main()
