"""`memory-engine` command line: serve locally, rebuild the search index, manage API keys."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path

from memory_engine.errors import MemoryEngineError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory-engine")
    commands = parser.add_subparsers(dest="command", required=True)
    serve_cmd = commands.add_parser("serve", help="run the local server (port from PORT, default 8080)")
    serve_cmd.add_argument("--host", default="127.0.0.1")
    serve_cmd.add_argument("--port", type=int, default=None)
    reindex_cmd = commands.add_parser("reindex", help="rebuild the search index from the store")
    reindex_cmd.add_argument("--tenant", default=None, help="only this tenant (default: all)")
    openapi_cmd = commands.add_parser("openapi", help="write the OpenAPI document of every route")
    openapi_cmd.add_argument("--out", type=Path, default=None, help="file to write (default: stdout)")
    _add_key_commands(commands.add_parser("keys", help="create, list, revoke and rotate API keys"))
    args = parser.parse_args(argv)

    try:
        return _run(args)
    except MemoryEngineError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return 1


def _add_key_commands(keys_cmd: argparse.ArgumentParser) -> None:
    actions = keys_cmd.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="a new key for a tenant; the key is printed once")
    create.add_argument("--tenant", required=True)
    create.add_argument("--label", default="", help="a note for `keys list` (who or what uses it)")
    listing = actions.add_parser("list", help="key ids, tenants and states (never the keys)")
    listing.add_argument("--tenant", default=None)
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    revoke = actions.add_parser("revoke", help="stop a key working now")
    revoke.add_argument("key_id")
    rotate = actions.add_parser("rotate", help="a new key for the same tenant; the old one is revoked")
    rotate.add_argument("key_id")
    rotate.add_argument("--grace-seconds", type=int, default=0, help="keep the old key working this long")


def _run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        from memory_engine.server.app import serve

        serve(args.host, args.port)
        return 0
    if args.command == "reindex":
        from tqdm import tqdm

        from memory_engine import wiring
        from memory_engine.usecases.indexing import rebuild

        engine = wiring.engine()
        with tqdm(unit=" memories", desc="reindex") as bar:
            count = rebuild(engine.store, engine.index, args.tenant, progress=lambda n: bar.update(n - bar.n))
        print(f"indexed {count} memories", file=sys.stderr)
        return 0
    if args.command == "openapi":
        from memory_engine.server.openapi import build_spec

        text = json.dumps(build_spec(), indent=2, ensure_ascii=False) + "\n"
        if args.out is None:
            sys.stdout.write(text)
        else:
            args.out.write_text(text)
        return 0
    return _keys(args)


def _keys(args: argparse.Namespace) -> int:
    from memory_engine import wiring
    from memory_engine.engine import SystemClock
    from memory_engine.usecases import keys

    store, now = wiring.key_store(), SystemClock().now()
    if args.action == "create":
        issued = keys.create(store, now, args.tenant, args.label)
        print(issued.key)
        print(
            f"key {issued.record.key_id} for tenant {issued.record.tenant}: keep it, it is not shown again",
            file=sys.stderr,
        )
    elif args.action == "rotate":
        issued = keys.rotate(store, now, args.key_id, timedelta(seconds=args.grace_seconds))
        print(issued.key)
        print(
            f"key {issued.record.key_id} replaces {args.key_id} (tenant {issued.record.tenant})",
            file=sys.stderr,
        )
    elif args.action == "revoke":
        revoked = keys.revoke(store, now, args.key_id)
        print(f"key {revoked.key_id} of tenant {revoked.tenant} revoked", file=sys.stderr)
    else:
        for key in keys.list_keys(store, args.tenant):
            state = "active" if key.revoked_at is None else ("revoked" if not key.active(now) else "expiring")
            if args.json:
                print(key.model_dump_json(exclude={"key_hash"}))
            else:
                until = f" until {key.revoked_at:%Y-%m-%dT%H:%M:%SZ}" if state == "expiring" else ""
                print(f"{key.key_id}  {key.tenant}  {state}{until}  {key.created_at:%Y-%m-%d}  {key.label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
