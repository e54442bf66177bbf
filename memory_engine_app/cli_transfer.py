"""A tenant's data as a whole: `memory-engine export` and `import` (docs/export.md), its JSON lines
out and back in, and `memory-engine retention`, how long its memories are kept; on whatever
backend the configuration names (the local data folder, or the DynamoDB table and OpenSearch index
of a deployed stack with MEMORY_ENGINE_BACKEND=aws)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

TRANSFER_COMMANDS = ("export", "import", "retention")


def add_transfer_commands(commands: Any) -> None:
    """Add `export`, `import` and `retention` to the CLI's subparsers."""
    out = commands.add_parser("export", help="write a tenant's turns, memories and facts as JSON lines")
    out.add_argument("--tenant", default=None, help="whose data (`local` is the local server's own key)")
    out.add_argument(
        "--api", default=None, help="export over HTTP from this API (GET /v1/export; the key's own data)"
    )
    out.add_argument("--key", default=None, help="with --api: an API key (default MEMORY_ENGINE_API_KEY)")
    chosen = out.add_mutually_exclusive_group()
    chosen.add_argument("--thread", default=None, help="only this thread (its sessions, memories, facts)")
    chosen.add_argument(
        "--scope", default=None, help='only the facts of this scope, as JSON: \'{"user_id": "123"}\''
    )
    out.add_argument("--out", default="-", help="the file to write (default: standard output)")
    into = commands.add_parser("import", help="read an export into a tenant (run twice, it writes once)")
    into.add_argument("file", help="an export's JSON lines ('-': standard input)")
    into.add_argument("--tenant", required=True, help="the tenant to import into")
    into.add_argument(
        "--map",
        default=None,
        help='scope values to rename, JSON {key: {old: new}}; the key "parent_session_uuid" renames threads',
    )

    kept = commands.add_parser("retention", help="how many days a tenant's memories are kept (show, set)")
    kept.add_argument("--tenant", required=True)
    how_long = kept.add_mutually_exclusive_group()
    how_long.add_argument(
        "--days", type=int, default=None, help="keep memories this many days after creation"
    )
    how_long.add_argument("--none", action="store_true", help="keep memories until deleted")


def run_transfer(args: argparse.Namespace) -> int:
    if args.command == "retention":
        return retention_command(args.tenant, args.days, args.none)
    if args.command == "export" and args.api:
        return export_remote(args.api, args.key, args.thread, args.scope, args.out)
    if args.command == "export":
        if not args.tenant:
            print(
                "memory-engine export: name the --tenant (or export a key's data with --api)", file=sys.stderr
            )
            return 2
        return export_command(args.tenant, args.thread, args.scope, args.out)
    return import_command(args.file, args.tenant, args.map)


def retention_command(tenant: str, days: int | None, none: bool) -> int:
    from tqdm import tqdm

    from memory_engine.usecases.retention import set_retention

    store = _store()
    if days is None and not none:
        kept = store.get_retention(tenant)
        print(
            f"tenant {tenant!r}: " + (f"memories kept {kept} days" if kept else "memories kept until deleted")
        )
        return 0
    with tqdm(unit=" memories", desc="retention") as bar:
        stamped = set_retention(
            store, tenant, None if none else days, progress=lambda n: bar.update(n - bar.n)
        )
    kept = "none" if none else f"{days} days"
    print(f"tenant {tenant!r}: retention {kept}; {stamped} stored memories expire sooner")
    return 0


def _store() -> Any:
    from memory_engine.composition import wiring
    from memory_engine.settings import get_settings

    installed = wiring.installed()  # a test's engine; else only the store is built (no model loads)
    return installed.store if installed is not None else wiring.build_store(get_settings())


def export_command(tenant: str, thread: str | None, scope: str | None, out: str) -> int:
    from memory_engine.models.export import EXPORT_VERSION, ExportRecord, parse_selection
    from memory_engine.usecases import export

    selection = parse_selection(thread, scope)
    store = _store()
    header = ExportRecord(
        kind="export",
        version=EXPORT_VERSION,
        tenant=tenant,
        selection=selection.model_dump(exclude_none=True),
        exported_at=datetime.now(UTC).isoformat(),
    )
    count = 0
    with _opened(out, "w") as sink:
        sink.write(header.model_dump_json() + "\n")
        for record in export.walk(store, tenant, selection):
            sink.write(record.model_dump_json() + "\n")
            count += 1
    print(f"exported {count} records of tenant {tenant!r}", file=sys.stderr)
    return 0


def export_remote(api: str, key: str | None, thread: str | None, scope: str | None, out: str) -> int:
    """The key's data from a running API, page by page, as the same file `export_command` writes."""
    from memory_engine.models.export import EXPORT_VERSION, ExportRecord, parse_selection

    try:
        from memory_engine_client import MemoryEngine
    except ImportError:
        print(
            "memory-engine export --api needs the Python client: pip install ./clients/python",
            file=sys.stderr,
        )
        return 2
    selection = parse_selection(thread, scope)
    header = ExportRecord(
        kind="export",
        version=EXPORT_VERSION,
        api=api,
        selection=selection.model_dump(exclude_none=True),
        exported_at=datetime.now(UTC).isoformat(),
    )
    count = 0
    with MemoryEngine(api, key) as engine, _opened(out, "w") as sink:
        sink.write(header.model_dump_json() + "\n")
        cursor: str | None = None
        while True:
            page = engine.export_page(thread=selection.thread, scope=selection.scope, cursor=cursor)
            for record in page.records:
                sink.write(record.model_dump_json() + "\n")
            count += len(page.records)
            cursor = page.next_cursor
            if cursor is None:
                break
    print(f"exported {count} records from {api}", file=sys.stderr)
    return 0


def import_command(file: str, tenant: str, mapping_json: str | None) -> int:
    from tqdm import tqdm

    from memory_engine.usecases import import_records
    from memory_engine_app.local_engine import engine

    mapping = _mapping(mapping_json)
    built = engine()
    importer = import_records.Importer(built, tenant, mapping)
    with _opened(file, "r") as source, tqdm(unit=" records", desc="import") as bar:
        for line, record in _records(source):
            importer.add(record, line)
            bar.update()
        report = importer.finish()
    _checkpoint(built.index)
    print(json.dumps(report.model_dump()), file=sys.stderr)
    return 0


def _records(source: IO[str]) -> Iterator[tuple[int, Any]]:
    from pydantic import ValidationError

    from memory_engine.errors import InvalidInput
    from memory_engine.models.export import ExportRecord

    for line, text in enumerate(source, start=1):
        if not text.strip():
            continue
        try:
            yield line, ExportRecord.model_validate_json(text)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "record"
            raise InvalidInput(f"line {line}: {where}: {first['msg']}") from None


def _mapping(mapping_json: str | None) -> dict[str, dict[str, str]]:
    from memory_engine.errors import InvalidInput

    if not mapping_json:
        return {}
    try:
        mapping = json.loads(mapping_json)
    except ValueError:
        mapping = None
    if not isinstance(mapping, dict) or not all(
        isinstance(values, dict) and all(isinstance(v, str) for v in [*values, *values.values()])
        for values in mapping.values()
    ):
        raise InvalidInput(
            '--map must be JSON {key: {old value: new value}}, e.g. {"user_id": {"123": "456"}}'
        )
    return mapping


def _checkpoint(index: object) -> None:
    """Persist the local index files now (a server started later finds them current)."""
    from memory_engine.adapters.local.index_files import PersistedIndex

    if isinstance(index, PersistedIndex):
        index.checkpoint()


class _opened:
    """A file by name, or standard input/output for '-'."""

    def __init__(self, name: str, mode: str) -> None:
        self.name, self.mode = name, mode
        self._file: IO[str] | None = None

    def __enter__(self) -> IO[str]:
        if self.name == "-":
            return sys.stdout if self.mode == "w" else sys.stdin
        self._file = Path(self.name).open(self.mode, encoding="utf-8")
        return self._file

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
